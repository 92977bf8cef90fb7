/**
 * Reconnect delay for the `attempt`-th consecutive failure (0-based): exponential from `initialMs`,
 * capped at `maxMs`, with "equal jitter" (a random point in the upper half) so many clients that
 * lost the runtime at the same moment do not reconnect in lockstep.
 */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random: () => number,
): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30))
  return ceiling / 2 + random() * (ceiling / 2)
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
