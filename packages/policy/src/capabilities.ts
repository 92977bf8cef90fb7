import { isPolicy, type Policy, parsePolicy } from './policy.ts'

/** One row of the spec's capability table. */
export type Capability =
  | 'agent-run'
  | 'session-list-get'
  | 'session-resources'
  | 'interaction-respond'
  | 'workspace-search-read'
  | 'session-fork-delete'
  | 'permission-approve'

/** A row of {@link CAPABILITY_TABLE}: the spec's wording and which policies have it. */
export interface CapabilityRow {
  readonly capability: Capability
  /** The row's text in the spec's "Policy model" table. */
  readonly description: string
  readonly grants: Readonly<Record<Policy, boolean>>
}

const row = (capability: Capability, description: string, chat: boolean, read: boolean, full: boolean) =>
  Object.freeze({ capability, description, grants: Object.freeze({ chat, read, full }) })

/**
 * The capability table of the spec ("Policy model"), row by row. The last spec row, the managed
 * agent profile, is `agentProfile()`.
 */
export const CAPABILITY_TABLE: readonly CapabilityRow[] = Object.freeze([
  row('agent-run', 'Guarded agent run, job polling, job cancel', true, true, true),
  row('session-list-get', 'Owned session list and get', true, true, true),
  row('session-resources', 'Session messages, diff and todos resources', true, true, true),
  row('interaction-respond', 'Question response and permission rejection', true, true, true),
  row('workspace-search-read', 'Bounded workspace search and read', false, true, true),
  row('session-fork-delete', 'Session fork and delete', false, false, true),
  row('permission-approve', 'Permission approval (once or always)', false, false, true),
])

/** Every capability, in table order. */
export const CAPABILITIES: readonly Capability[] = Object.freeze(CAPABILITY_TABLE.map((r) => r.capability))

/**
 * True when `policy` has `capability`. Fails closed: false for any unknown policy or capability.
 * @example hasCapability('read', 'workspace-search-read') // true
 */
export function hasCapability(policy: Policy, capability: Capability): boolean {
  if (!isPolicy(policy)) return false
  return CAPABILITY_TABLE.some((r) => r.capability === capability && r.grants[policy])
}

/**
 * The capabilities of `policy`, in table order.
 * @throws TypeError for an unknown policy.
 */
export function capabilitiesFor(policy: Policy): readonly Capability[] {
  const checked = parsePolicy(policy)
  return Object.freeze(CAPABILITIES.filter((capability) => hasCapability(checked, capability)))
}
