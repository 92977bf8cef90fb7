import { checkKey } from './check-key.ts'
import { CredentialError } from './errors.ts'
import { IssuerSchema, type Policy, PolicySchema, SubjectSchema, USERNAME_PATTERN } from './schemas.ts'

/**
 * True when `name` is a valid username: `^[a-z][a-z0-9_-]{0,31}$` (lowercase letter first,
 * at most 32 characters, no dots or slashes).
 */
export function isValidUsername(name: unknown): name is string {
  return typeof name === 'string' && USERNAME_PATTERN.test(name)
}

/** Throws `ERR_CREDENTIALS_INVALID_USERNAME` unless `name` is a valid username. */
export function assertUsername(name: unknown): asserts name is string {
  if (!isValidUsername(name)) {
    throw new CredentialError(
      'ERR_CREDENTIALS_INVALID_USERNAME',
      'username must match ^[a-z][a-z0-9_-]{0,31}$ (lowercase letter first, at most 32 characters)',
    )
  }
}

/** True when `value` is one of `chat`, `read`, `full`. */
export function isPolicy(value: unknown): value is Policy {
  return PolicySchema.safeParse(value).success
}

/** Throws `ERR_CREDENTIALS_INVALID_POLICY` unless `value` is a policy. */
export function assertPolicy(value: unknown): asserts value is Policy {
  if (!isPolicy(value)) {
    throw new CredentialError('ERR_CREDENTIALS_INVALID_POLICY', 'policy must be one of chat, read, full')
  }
}

/** Throws `ERR_CREDENTIALS_INVALID_KEY` unless an operator-supplied key passes the key rules. */
export function assertOperatorKey(key: unknown): asserts key is string {
  const check = checkKey(typeof key === 'string' ? key : undefined)
  if (typeof key !== 'string' || !check.ok) {
    // The fixed message of checkKey never echoes the key.
    const reason = check.ok ? 'key must be a string' : check.message
    throw new CredentialError('ERR_CREDENTIALS_INVALID_KEY', `invalid key: ${reason}`)
  }
}

/** Throws `ERR_CREDENTIALS_INVALID_MAPPING` unless issuer and subject are acceptable. */
export function assertOAuthPair(issuer: unknown, subject: unknown): asserts issuer is string {
  if (!IssuerSchema.safeParse(issuer).success) {
    throw new CredentialError('ERR_CREDENTIALS_INVALID_MAPPING', 'issuer must be an HTTPS URL')
  }
  if (!SubjectSchema.safeParse(subject).success) {
    throw new CredentialError(
      'ERR_CREDENTIALS_INVALID_MAPPING',
      'subject must be 1 to 255 characters without control characters',
    )
  }
}
