/** Stable codes of {@link GuardError}; callers branch on these, never on messages. */
export type GuardErrorCode =
  | 'ERR_GUARD_DENIED'
  | 'ERR_GUARD_NOT_FOUND'
  | 'ERR_GUARD_TOO_LARGE'
  | 'ERR_GUARD_NOT_TEXT'
  | 'ERR_GUARD_INVALID'

/**
 * The one fixed message per code. A path refused by name before any I/O and a path refused after
 * canonicalisation (symlink out of the root, swapped file, secret content) get the same code and
 * the same message, so an error never tells whether a denied path exists. No message ever contains
 * a path.
 */
export const GUARD_MESSAGES: Readonly<Record<GuardErrorCode, string>> = Object.freeze({
  ERR_GUARD_DENIED: 'path is not readable in this workspace',
  ERR_GUARD_NOT_FOUND: 'no such file in the workspace',
  ERR_GUARD_TOO_LARGE: 'file is larger than the read limit',
  ERR_GUARD_NOT_TEXT: 'file is not UTF-8 text',
  ERR_GUARD_INVALID: 'invalid request',
})

const marker = Symbol.for('sallyport.workspace-guard.GuardError')

/**
 * Error thrown by `read` and `search`. `message` is fixed per code (see {@link GUARD_MESSAGES})
 * except for `ERR_GUARD_INVALID`, whose message names the offending option but never echoes input.
 *
 * @example
 * try { await guard.read(p) } catch (e) { if (GuardError.isInstance(e) && e.code === 'ERR_GUARD_NOT_FOUND') … }
 */
export class GuardError extends Error {
  override readonly name = 'GuardError'
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  constructor(
    readonly code: GuardErrorCode,
    message: string = GUARD_MESSAGES[code],
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  /** True for a `GuardError`, also across duplicated copies of this package. */
  static isInstance(value: unknown): value is GuardError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}

/** The one way the package refuses a path: fixed code, fixed message, no cause (it could hold a path). */
export function denied(): GuardError {
  return new GuardError('ERR_GUARD_DENIED')
}
