/** A credential's policy (spec "Policy model"); it selects the MCP catalog and the agent profile. */
export type Policy = 'chat' | 'read' | 'full'

/** Every policy, from least to most privileged. */
export const POLICIES: readonly Policy[] = Object.freeze(['chat', 'read', 'full'])

/** True only for the exact strings `chat`, `read` and `full`. */
export function isPolicy(value: unknown): value is Policy {
  // `includes` rather than `value in table`: `in` would accept 'toString' and other inherited keys.
  return typeof value === 'string' && (POLICIES as readonly string[]).includes(value)
}

/**
 * Returns `value` as a `Policy`.
 * @throws TypeError for anything but `chat`, `read` or `full` (case-sensitive, no trimming). The
 *   message never repeats the value, which may come from a misplaced secret.
 * @example parsePolicy(process.env.POLICY) // 'read'
 */
export function parsePolicy(value: unknown): Policy {
  if (!isPolicy(value)) throw new TypeError(`policy must be one of ${POLICIES.join(', ')}`)
  return value
}
