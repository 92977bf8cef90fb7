/** Every code a {@link CliError} can carry. */
export type CliErrorCode =
  | 'ERR_CLI_USAGE'
  | 'ERR_CLI_STACK_MISSING'
  | 'ERR_CLI_CONFIG_INVALID'
  | 'ERR_CLI_PORT_IN_USE'
  | 'ERR_CLI_BINARY_NOT_FOUND'
  | 'ERR_CLI_START_FAILED'
  | 'ERR_CLI_ASSISTANT_EXITED'
  | 'ERR_CLI_MODERATOR_EXITED'
  | 'ERR_CLI_SCHEDULER_EXITED'
  | 'ERR_CLI_CHECK_FAILED'
  | 'ERR_CLI_IO'

const marker = Symbol.for('sallyport.cli.CliError')

/**
 * The CLI's own error. Its message is the one line the operator sees: it names paths relative to
 * the stack and never a key, a password or a secret's bytes.
 */
export class CliError extends Error {
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  constructor(
    readonly code: CliErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'CliError'
  }

  /** True for a {@link CliError}, also one from another copy of this package. */
  static isInstance(value: unknown): value is CliError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
