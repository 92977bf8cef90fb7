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

// Keyed by every `ToolName` (in catalog order): a tool missing here, or a misspelt one, does not
// compile.
const REQUIRES = {
  'gateway.agent.run': 'agent-run',
  'gateway.job.get': 'agent-run',
  'gateway.job.cancel': 'agent-run',
  'gateway.session.list': 'session-list-get',
  'gateway.session.get': 'session-list-get',
  'gateway.session.fork': 'session-fork-delete',
  'gateway.session.delete': 'session-fork-delete',
  'gateway.workspace.search': 'workspace-search-read',
  'gateway.workspace.read': 'workspace-search-read',
  // Rejection is open to every policy; approval is checked per decision (`isDecisionAllowed`).
  'gateway.interaction.respond': 'interaction-respond',
  // Lists only what the caller's own policy offers, so it needs no capability of its own.
  'gateway.catalog.get': null,
} as const satisfies Record<ToolName, Capability | null>

/** Every tool, in catalog order. */
export const TOOLS: readonly ToolDefinition[] = Object.freeze(
  (Object.keys(REQUIRES) as ToolName[]).map((name) => tool(name, REQUIRES[name])),
)

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
