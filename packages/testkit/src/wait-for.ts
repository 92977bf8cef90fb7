import { setTimeout as sleep } from 'node:timers/promises'
import { TestkitError } from './errors.ts'

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long; default 10 000 ms. */
  timeoutMs?: number
  /** Pause between attempts; default 50 ms. */
  intervalMs?: number
  /** Names the condition in the timeout message. */
  description?: string
  /**
   * Checked before each attempt: an error returned ends the wait at once with that error (a
   * process that exited will never become ready). Errors thrown by `check` only mean "not yet".
   */
  giveUp?: () => Error | undefined
}

/**
 * Polls `check` until it returns a value other than `undefined`, `null` or `false`, and returns
 * that value. Exceptions from `check` count as "not yet" (the last one becomes the `cause`).
 * Use it instead of fixed sleeps in end-to-end tests.
 *
 * Throws `TestkitError` `ERR_TESTKIT_WAIT_TIMEOUT` when the deadline passes (its message ends with
 * the last error's), or what `giveUp` returns.
 *
 * @example
 * const done = await waitFor(async () => (await listMessages()).find((m) => m.info.time.completed))
 */
export async function waitFor<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 50, description = 'condition', giveUp } = options
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    const reason = giveUp?.()
    if (reason) throw reason
    try {
      const value = await check()
      if (value !== undefined && value !== null && value !== false) return value
    } catch (error) {
      lastError = error
    }
    if (Date.now() >= deadline) {
      throw new TestkitError(
        'ERR_TESTKIT_WAIT_TIMEOUT',
        `waitFor: ${description} not met within ${timeoutMs} ms${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}`,
        {
          cause: lastError,
        },
      )
    }
    await sleep(intervalMs)
  }
}
