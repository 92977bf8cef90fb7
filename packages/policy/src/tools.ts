import type { Capability } from './capabilities.ts'
import { listsByPolicy } from './grant-lists.ts'
import { isPolicy, type Policy, parsePolicy } from './policy.ts'

/** An MCP tool of the gateway (DESIGN "The tool surface"). */
export type ToolName =
  | 'gateway.agent.run'
  | 'gateway.job.get'
  | 'gateway.job.cancel'
  | 'gateway.session.list'
  | 'gateway.session.get'
  | 'gateway.session.fork'
  | 'gateway.session.delete'
  | 'gateway.workspace.search'
  | 'gateway.workspace.read'
  | 'gateway.interaction.respond'
  | 'gateway.catalog.get'

/** A tool and the capability it needs (`null`: every policy). */
export interface ToolDefinition {
  readonly name: ToolName
  readonly requires: Capability | null
}

const tool = (name: ToolName, requires: Capability | null): ToolDefinition =>
  Object.freeze({ name, requires })

/** Every tool, in catalog order. */
export const TOOLS: readonly ToolDefinition[] = Object.freeze([
  tool('gateway.agent.run', 'agent-run'),
  tool('gateway.job.get', 'agent-run'),
  tool('gateway.job.cancel', 'agent-run'),
  tool('gateway.session.list', 'session-list-get'),
  tool('gateway.session.get', 'session-list-get'),
  tool('gateway.session.fork', 'session-fork-delete'),
  tool('gateway.session.delete', 'session-fork-delete'),
  tool('gateway.workspace.search', 'workspace-search-read'),
  tool('gateway.workspace.read', 'workspace-search-read'),
  // Rejection is open to every policy; approval is checked per decision (`isDecisionAllowed`).
  tool('gateway.interaction.respond', 'interaction-respond'),
  // Lists only what the caller's own policy offers, so it needs no capability of its own.
  tool('gateway.catalog.get', null),
])

const NAMES_BY_POLICY = Object.fromEntries(
  Object.entries(listsByPolicy(TOOLS)).map(([policy, tools]) => [
    policy,
    Object.freeze(tools.map((t) => t.name)),
  ]),
) as Readonly<Record<Policy, readonly ToolName[]>>

/**
 * The tool names `policy` may list and call: 7 for `chat`, 9 for `read`, 11 for `full`.
 * @throws TypeError for an unknown policy.
 */
export function toolsFor(policy: Policy): readonly ToolName[] {
  return NAMES_BY_POLICY[parsePolicy(policy)]
}

/** True when `policy` may call the tool `name`. Fails closed: false for unknown names or policies. */
export function isToolAllowed(policy: Policy, name: string): boolean {
  return (
    isPolicy(policy) &&
    typeof name === 'string' &&
    (NAMES_BY_POLICY[policy] as readonly string[]).includes(name)
  )
}
