/** Codes a {@link HandleError} carries; callers branch on these, never on the message. */
export type HandleErrorCode = 'ERR_HANDLE_MALFORMED' | 'ERR_HANDLE_INVALID' | 'ERR_HANDLE_EXPIRED'

/**
 * The one fixed message of each code. A handle that fails authentication for any reason
 * (tampered, truncated, other key, other identity, other kind) gets the same INVALID message, so
 * the message can never tell an attacker which check failed.
 */
export const HANDLE_ERROR_MESSAGES: Readonly<Record<HandleErrorCode, string>> = Object.freeze({
  ERR_HANDLE_MALFORMED: 'handle is malformed',
  ERR_HANDLE_INVALID: 'handle is invalid',
  ERR_HANDLE_EXPIRED: 'handle has expired',
})

const marker = Symbol.for('sallyport.handles.HandleError')

/**
 * Thrown by `HandleCodec.open` when a handle is refused. Never carries the handle, a key or a
 * payload, in its message or its `cause`.
 */
export class HandleError extends Error {
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  constructor(
    readonly code: HandleErrorCode,
    message: string = HANDLE_ERROR_MESSAGES[code],
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'HandleError'
  }

  /** True for a `HandleError`, also one created by another copy of this package. */
  static isInstance(value: unknown): value is HandleError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
