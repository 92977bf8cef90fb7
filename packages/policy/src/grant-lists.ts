import { type Capability, hasCapability } from './capabilities.ts'
import { POLICIES, type Policy } from './policy.ts'

/** Something offered to a policy when it holds `requires` (`null`: offered to every policy). */
export interface Gated {
  readonly requires: Capability | null
}

/**
 * Splits a catalog table into one frozen list per policy, computed once: the lists follow from
 * the capability table, so a tool can never be offered without its capability.
 */
export function listsByPolicy<T extends Gated>(rows: readonly T[]): Readonly<Record<Policy, readonly T[]>> {
  const lists = {} as Record<Policy, readonly T[]>
  for (const policy of POLICIES) {
    lists[policy] = Object.freeze(
      rows.filter((r) => r.requires === null || hasCapability(policy, r.requires)),
    )
  }
  return Object.freeze(lists)
}
