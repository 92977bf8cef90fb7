/** Every code a {@link SchedulerError} can carry. */
export type SchedulerErrorCode =
  /** A task id that does not match `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`. */
  | 'ERR_SCHEDULER_INVALID_ID'
  /** A task source (or a change to one) that fails validation. */
  | 'ERR_SCHEDULER_INVALID_TASK'
  | 'ERR_SCHEDULER_NOT_FOUND'
  | 'ERR_SCHEDULER_EXISTS'
  /** config/akm/config.json or sallyport.json cannot be read or is invalid. */
  | 'ERR_SCHEDULER_CONFIG'
  /** Another mutation holds the task lock for too long. */
  | 'ERR_SCHEDULER_LOCKED'
  /** The running scheduler refused a change (it was rolled back), or could not be asked. */
  | 'ERR_SCHEDULER_RECONCILE'
  /** No scheduler answers (the stack is not running). */
  | 'ERR_SCHEDULER_UNAVAILABLE'
  /** A file operation failed. */
  | 'ERR_SCHEDULER_IO'
  /** An agent that may not change tasks asked to. */
  | 'ERR_SCHEDULER_FORBIDDEN'

const marker = Symbol.for('sallyport.scheduler.SchedulerError')

/** The one error class of this package. Messages name task ids and paths in the stack, never a prompt or a password. */
export class SchedulerError extends Error {
  readonly [marker] = true

  constructor(
    readonly code: SchedulerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'SchedulerError'
  }

  /** True for a {@link SchedulerError}, also one from another copy of this package. */
  static isInstance(value: unknown): value is SchedulerError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
