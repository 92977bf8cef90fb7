import { DEFAULT_LIMITS, type GatewayLimits, LIMIT_BOUNDS } from '../config.js'

/**
 * Applies the defaults to `given` and checks every limit against `LIMIT_BOUNDS` (the table the
 * CLI's `sallyport.json` schema uses too). Unknown keys are ignored.
 * @throws RangeError naming the limit, never its value.
 */
export function resolveLimits(given: Partial<GatewayLimits> = {}): GatewayLimits {
  const limits = { ...DEFAULT_LIMITS }
  for (const key of Object.keys(LIMIT_BOUNDS) as Array<keyof GatewayLimits>) {
    const value: unknown = given[key]
    if (value === undefined) continue
    const { min, max, integer } = LIMIT_BOUNDS[key]
    if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isSafeInteger(value)))
      throw new RangeError(`limits.${key} must be a${integer ? 'n integer' : ' number'}`)
    if (value < min) throw new RangeError(`limits.${key} must be ≥ ${min}`)
    if (value > max) throw new RangeError(`limits.${key} must be ≤ ${max}`)
    limits[key] = value
  }
  return limits
}

/** Thrown by the per-credential limiters; `retryAfterMs` is the hint given to the client. */
export class RateLimited extends Error {
  readonly retryAfterMs: number
  constructor(message: string, retryAfterMs: number) {
    super(message)
    this.name = 'RateLimited'
    this.retryAfterMs = retryAfterMs
  }
}

export type SlotKind = 'wait' | 'run'

/** Per-credential state: a token bucket of operations, one of run starts, and two counters. */
interface Account {
  tokens: number
  refilledAt: number
  runTokens: number
  runsRefilledAt: number
  wait: number
  run: number
}

export interface CredentialLimiter {
  /**
   * Takes `count` operations from the credential's bucket, all or nothing; `undefined` when
   * allowed, else the milliseconds until that many tokens are back. `count` 0 takes nothing and
   * tells whether a single operation would be allowed now.
   */
  take(username: string, count: number): number | undefined
  /**
   * Takes `count` more operations from the credential's bucket after the fact, for an operation
   * that turned out to cost the runtime more than one: never refuses the call that incurred it;
   * the bucket may go into debt (at most one burst), which later calls wait out.
   */
  charge(username: string, count: number): void
  /**
   * Charges (as `charge`) the runtime's answers read for one call: one operation per
   * `readBytesPerOperation` bytes, fractions included. Nothing without that limit.
   */
  chargeRead(username: string, bytes: number): void
  /**
   * Holds one slot of `kind` until the returned release is called; throws `RateLimited`. A `run`
   * slot also takes one run start from the credential's run bucket (`runsPerMinute`,
   * `runBurst`), or is refused.
   */
  acquire(username: string, kind: SlotKind): () => void
  /** Milliseconds the bucket takes to earn back one operation (the shortest useful retry hint). */
  readonly tokenMs: number
}

/**
 * In-memory per-credential limits of one gateway process. Idle accounts are dropped, so the map
 * holds only credentials that were active within the last refill period.
 */
export function createCredentialLimiter(
  limits: Pick<GatewayLimits, 'ratePerSecond' | 'rateBurst' | 'concurrentWaits' | 'concurrentRuns'> &
    Partial<Pick<GatewayLimits, 'runsPerMinute' | 'runBurst' | 'readBytesPerOperation'>>,
  now: () => number = () => performance.now(),
): CredentialLimiter {
  const accounts = new Map<string, Account>()
  const fullAfterMs = (limits.rateBurst / limits.ratePerSecond) * 1000
  /** The time an account in debt (see `charge`) needs on top of a refill from empty. */
  const debtMs = (a: Account): number => (a.tokens < 0 ? (-a.tokens / limits.ratePerSecond) * 1000 : 0)
  // Run starts (without these limits, unbounded: only the operation rate counts a run).
  const runBurst = limits.runBurst ?? Number.POSITIVE_INFINITY
  const runsPerMs = (limits.runsPerMinute ?? Number.POSITIVE_INFINITY) / 60_000
  /** The time an account's run bucket needs to be full again. */
  const runsRefillMs = (a: Account): number =>
    Number.isFinite(runBurst) ? (runBurst - a.runTokens) / runsPerMs : 0
  let sweptAt = now()
  const account = (username: string): Account => {
    const t = now()
    if (t - sweptAt > fullAfterMs && accounts.size > 0) {
      sweptAt = t
      for (const [name, a] of accounts)
        if (
          a.wait === 0 &&
          a.run === 0 &&
          t - a.refilledAt >= fullAfterMs + debtMs(a) &&
          t - a.runsRefilledAt >= runsRefillMs(a)
        )
          accounts.delete(name)
    }
    let a = accounts.get(username)
    if (!a) {
      a = { tokens: limits.rateBurst, refilledAt: t, runTokens: runBurst, runsRefilledAt: t, wait: 0, run: 0 }
      accounts.set(username, a)
    }
    a.tokens = Math.min(limits.rateBurst, a.tokens + ((t - a.refilledAt) / 1000) * limits.ratePerSecond)
    a.refilledAt = t
    return a
  }
  const cap: Record<SlotKind, number> = { wait: limits.concurrentWaits, run: limits.concurrentRuns }
  const charge = (username: string, count: number): void => {
    if (!(count > 0)) return
    const a = account(username)
    a.tokens = Math.max(-limits.rateBurst, a.tokens - count)
  }
  return {
    tokenMs: Math.ceil(1000 / limits.ratePerSecond),
    take(username, count) {
      const a = account(username)
      const need = Math.max(count, 1)
      if (a.tokens >= need) {
        a.tokens -= count
        return undefined
      }
      return Math.ceil(((need - a.tokens) / limits.ratePerSecond) * 1000)
    },
    charge,
    chargeRead(username, bytes) {
      if (limits.readBytesPerOperation !== undefined) charge(username, bytes / limits.readBytesPerOperation)
    },
    acquire(username, kind) {
      const a = account(username)
      if (a[kind] >= cap[kind]) {
        throw new RateLimited(
          kind === 'wait'
            ? `Too many waiting calls for this credential (at most ${cap.wait} at once). Retry without waitMs, or after another wait returns.`
            : `Too many runs in progress for this credential (at most ${cap.run} at once). Retry once one of them has ended, or cancel one (gateway.session.get gives a running session's activeJob).`,
          1000,
        )
      }
      if (kind === 'run' && Number.isFinite(runBurst)) {
        const t = now()
        a.runTokens = Math.min(runBurst, a.runTokens + (t - a.runsRefilledAt) * runsPerMs)
        a.runsRefilledAt = t
        if (a.runTokens < 1)
          throw new RateLimited(
            `Too many runs started by this credential (at most ${limits.runsPerMinute} a minute, ${runBurst} at once). Retry later.`,
            Math.ceil((1 - a.runTokens) / runsPerMs),
          )
        a.runTokens -= 1
      }
      a[kind]++
      let released = false
      return () => {
        if (released) return
        released = true
        // Accounts holding a slot are never swept, so `a` is still the live one.
        a[kind]--
      }
    },
  }
}
