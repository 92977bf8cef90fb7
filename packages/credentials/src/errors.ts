/** Every code a {@link CredentialError} can carry. */
export type CredentialErrorCode =
  | 'ERR_CREDENTIALS_INVALID_USERNAME'
  | 'ERR_CREDENTIALS_INVALID_POLICY'
  | 'ERR_CREDENTIALS_INVALID_KEY'
  | 'ERR_CREDENTIALS_INVALID_MAPPING'
  | 'ERR_CREDENTIALS_KEY_IN_USE'
  | 'ERR_CREDENTIALS_EXISTS'
  | 'ERR_CREDENTIALS_NOT_FOUND'
  | 'ERR_CREDENTIALS_LIMIT'
  | 'ERR_CREDENTIALS_LOCKED'
  | 'ERR_CREDENTIALS_CORRUPT'
  | 'ERR_CREDENTIALS_IO'
  | 'ERR_CREDENTIALS_SECRET_MISSING'
  | 'ERR_CREDENTIALS_SECRET_INVALID'
  | 'ERR_CREDENTIALS_SECRET_INSECURE'

const marker = Symbol.for('sallyport.credentials.CredentialError')

/**
 * The one error class of this package. Messages name usernames and store-relative paths, never a
 * key, a key's length or a secret's bytes.
 */
export class CredentialError extends Error {
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  constructor(
    readonly code: CredentialErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'CredentialError'
  }

  /** True for a {@link CredentialError}, also one from another copy of this package. */
  static isInstance(value: unknown): value is CredentialError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
