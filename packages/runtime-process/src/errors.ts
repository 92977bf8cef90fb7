import type { ExitInfo } from './spawn-process.ts'

/** Codes of {@link RuntimeProcessError}; callers branch on these, never on messages. */
export type RuntimeProcessErrorCode =
  | 'ERR_RUNTIME_PROCESS_BINARY_NOT_FOUND'
  | 'ERR_RUNTIME_PROCESS_EXITED'
  | 'ERR_RUNTIME_PROCESS_TIMEOUT'

const marker = Symbol.for('sallyport.runtime-process.RuntimeProcessError')

/**
 * The package's one error class. The message is one line naming the process (`assistant runtime
 * exited with code 1 before it was listening (last output: …)`); it never holds a password or an
 * environment value. `exit` is set for `ERR_RUNTIME_PROCESS_EXITED`.
 *
 * @example
 * try { await waitUntilReady(...) } catch (e) { if (RuntimeProcessError.isInstance(e)) console.error(e.code) }
 */
export class RuntimeProcessError extends Error {
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true
  override readonly name = 'RuntimeProcessError'
  /** How the process ended, when it did. */
  readonly exit: ExitInfo | undefined

  constructor(
    readonly code: RuntimeProcessErrorCode,
    message: string,
    options?: { cause?: unknown; exit?: ExitInfo },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.exit = options?.exit
  }

  /** True for a `RuntimeProcessError`, also one thrown by another copy of this package. */
  static isInstance(value: unknown): value is RuntimeProcessError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
