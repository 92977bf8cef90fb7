import { hasCapability } from './capabilities.ts'
import { type Policy, parsePolicy } from './policy.ts'

/** A client's answer to a permission ask of the agent runtime. */
export type PermissionDecision = 'once' | 'always' | 'reject'

/**
 * True when `policy` may approve a permission (once or always): `full` only. A non-`full`
 * credential can never approve. Fails closed: false for unknown policies.
 */
export function canApprove(policy: Policy): boolean {
  return hasCapability(policy, 'permission-approve')
}

/**
 * The permission decisions `policy` may send: `['once', 'always', 'reject']` for `full`,
 * `['reject']` otherwise.
 * @throws TypeError for an unknown policy.
 */
export function allowedDecisions(policy: Policy): readonly PermissionDecision[] {
  const checked = parsePolicy(policy)
  const decisions: PermissionDecision[] = []
  if (canApprove(checked)) decisions.push('once', 'always')
  if (hasCapability(checked, 'interaction-respond')) decisions.push('reject')
  return Object.freeze(decisions)
}

/** True when `policy` may send `decision`. Fails closed: false for unknown policies or decisions. */
export function isDecisionAllowed(policy: Policy, decision: string): boolean {
  return (
    (decision === 'reject' && hasCapability(policy, 'interaction-respond')) ||
    ((decision === 'once' || decision === 'always') && canApprove(policy))
  )
}
