import type { Logger } from '../logger.js'

// Requests refused before any credential is known (no key, a wrong key, a foreign Origin) cost
// the gateway almost nothing to answer, but a line each in the log: 64 connections without a key
// wrote 129 500 lines in 41 s (the review's storm). Each is logged up to a number a second; the
// rest of that second is counted, and one line then says how many, by status and reason.

/** Refusals logged one line each per second; the others of that second are summed up. */
export const REFUSAL_LINES_PER_SECOND = 20

export interface RefusalLog {
  /** Logs (or counts, past the second's allowance) one refused request. */
  refused(status: number, reason: string, message: string, requestId: string): void
  /** Writes the summary of the current second now, if any refusal was left out. */
  flush(): void
}

export function createRefusalLog(
  logger: Logger,
  path: string,
  options: { perSecond?: number; now?: () => number } = {},
): RefusalLog {
  const perSecond = options.perSecond ?? REFUSAL_LINES_PER_SECOND
  const now = options.now ?? (() => performance.now())
  let windowStart = Number.NEGATIVE_INFINITY
  let logged = 0
  let left = new Map<string, number>()
  let timer: ReturnType<typeof setTimeout> | undefined

  const flush = (): void => {
    if (timer) clearTimeout(timer)
    timer = undefined
    if (left.size === 0) return
    const counts = Object.fromEntries(left)
    const total = [...left.values()].reduce((a, b) => a + b, 0)
    left = new Map()
    logger.warn(
      { event: 'http_refusals_unlogged', path, count: total, byStatusAndReason: counts },
      'refused requests not logged one by one',
    )
  }

  return {
    refused(status, reason, message, requestId) {
      const t = now()
      if (t - windowStart >= 1000) {
        flush()
        windowStart = t
        logged = 0
      }
      if (logged < perSecond) {
        logged++
        logger.warn({ event: 'http', path, status, reason, requestId }, message)
        return
      }
      const key = `${status}/${reason}`
      left.set(key, (left.get(key) ?? 0) + 1)
      // The summary is written when the second ends, even if no request comes after it.
      if (!timer) {
        timer = setTimeout(flush, Math.max(0, windowStart + 1000 - t))
        timer.unref?.()
      }
    },
    flush,
  }
}
