import { hasCapability } from './capabilities.ts'
import { type Policy, parsePolicy } from './policy.ts'

/** A client's answer to a permission ask of the agent runtime. */
export type PermissionDecision = 'once' | 'always' | 'reject'

/**
 * Runtime permissions that may be approved `once` but never `always`. OpenCode 1.18.33 asks
 * `webfetch` with `always: ["*"]`: approving "always" would approve every URL for the whole
 * project until the runtime restarts, far more than the one URL the ask shows.
 */
export const ONCE_ONLY_PERMISSIONS: readonly string[] = Object.freeze(['webfetch'])

/**
 * True when `policy` may approve a permission (once or always): `full` only. A non-`full`
 * credential can never approve. Fails closed: false for unknown policies.
 */
export function canApprove(policy: Policy): boolean {
  return hasCapability(policy, 'permission-approve')
}

/**
 * The permission decisions `policy` may send for an ask of `permission` (the runtime's
 * permission name, e.g. `bash`): `['once', 'always', 'reject']` for `full`, `['once', 'reject']`
 * for `full` on a {@link ONCE_ONLY_PERMISSIONS} ask, `['reject']` otherwise. Without
 * `permission`, the decisions for an ask of an ordinary permission.
 * @throws TypeError for an unknown policy.
 * @example allowedDecisions('full', 'webfetch') // ['once', 'reject']
 */
export function allowedDecisions(policy: Policy, permission?: string): readonly PermissionDecision[] {
  const checked = parsePolicy(policy)
  const decisions: PermissionDecision[] = []
  if (canApprove(checked)) {
    decisions.push('once')
    if (!isOnceOnly(permission)) decisions.push('always')
  }
  if (hasCapability(checked, 'interaction-respond')) decisions.push('reject')
  return Object.freeze(decisions)
}

/**
 * True when `policy` may send `decision` for an ask of `permission` (see
 * {@link allowedDecisions}; without `permission`, an ordinary ask). Fails closed: false for
 * unknown policies or decisions.
 */
export function isDecisionAllowed(policy: Policy, decision: string, permission?: string): boolean {
  return (
    (decision === 'reject' && hasCapability(policy, 'interaction-respond')) ||
    (decision === 'once' && canApprove(policy)) ||
    (decision === 'always' && canApprove(policy) && !isOnceOnly(permission))
  )
}

function isOnceOnly(permission: string | undefined): boolean {
  return permission !== undefined && ONCE_ONLY_PERMISSIONS.includes(permission)
}
