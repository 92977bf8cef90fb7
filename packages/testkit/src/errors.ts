/** Codes of {@link TestkitError}. */
export type TestkitErrorCode =
  | 'ERR_TESTKIT_BINARY_NOT_FOUND'
  | 'ERR_TESTKIT_RUNTIME_EXITED'
  | 'ERR_TESTKIT_RUNTIME_TIMEOUT'
  | 'ERR_TESTKIT_WAIT_TIMEOUT'

const marker = Symbol.for('sallyport.testkit.TestkitError')

/** The one error class of the testkit; `code` says what failed, the message carries the details (log tail). */
export class TestkitError extends Error {
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  constructor(
    readonly code: TestkitErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'TestkitError'
  }

  static isInstance(value: unknown): value is TestkitError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
