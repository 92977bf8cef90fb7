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

export type SlotKind = 'wait' | 'run' | 'call'

/**
 * Ends a slot taken by `acquire` (calling it again does nothing). `events` charges the runtime
 * events a run slot's run caused (see `runEventsPerSecond`) and answers whether the credential's
 * runs have now overdrawn their allowance by a whole burst (the bucket is at its floor): a run
 * still causing events then is to be stopped, since refusing new runs no longer bounds what the
 * runs in progress make the runtime do. It does nothing, and answers false, for other slots.
 */
export type SlotRelease = (() => void) & { readonly events: (count: number) => boolean }

/**
 * How fast an estimate forgets a costly past, per call or run that read or did anything: the
 * estimate is the larger of the last cost and the previous estimate times this.
 */
const ESTIMATE_DECAY = 0.5

/**
 * How long a credential whose last run has ended still counts as running for the share of
 * `concurrentRuns`: a person's or a client's next run follows the last within seconds, and the
 * share must not swing open in the gap between two of its runs (another credential's runs
 * started in that gap would all be in progress when the next one starts).
 */
export const RUN_SHARE_LINGER_MS = 5_000

/** Per-credential state: token buckets of operations, run starts and run events; slot counters. */
interface Account {
  tokens: number
  refilledAt: number
  runTokens: number
  runsRefilledAt: number
  /** Runtime events the credential's runs may still cause at once (`runEventsPerSecond`). */
  events: number
  eventsRefilledAt: number
  /** What one of its calls is expected to read, in operations (taken ahead, see `reserveRead`). */
  readEstimate: number
  /** The runtime events one of its runs is expected to cause (taken ahead of a run). */
  runEstimate: number
  wait: number
  run: number
  call: number
  /** When its last run in progress ended (for the share of `concurrentRuns`). */
  runEndedAt: number
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
   * Takes, ahead of a call, what the credential's calls have lately read from the runtime (in
   * operations, see `chargeRead`), or throws `RateLimited` when its bucket holds less: a burst of
   * big reads is then admitted as the bucket affords them, not all at once to be charged after.
   * Returns what it took, for `chargeRead`. 0 without `readBytesPerOperation`.
   */
  reserveRead(username: string): number
  /**
   * Charges (as `charge`) the runtime's answers read for one call: one operation per
   * `readBytesPerOperation` bytes, fractions included, less `reserved` (what `reserveRead` took
   * for it: a call that read less gets the rest back). Nothing without that limit.
   */
  chargeRead(username: string, bytes: number, reserved?: number): void
  /**
   * Holds one slot of `kind` until the returned release is called; throws `RateLimited`. A `run`
   * slot also takes one run start from the credential's run bucket (`runsPerMinute`,
   * `runBurst`) and, from its bucket of runtime events (`runEventsPerSecond`), what its runs
   * have lately caused; it is refused when either bucket holds too little.
   */
  acquire(username: string, kind: SlotKind): SlotRelease
  /** Milliseconds the bucket takes to earn back one operation (the shortest useful retry hint). */
  readonly tokenMs: number
}

/**
 * In-memory per-credential limits of one gateway process. Idle accounts are dropped, so the map
 * holds only credentials that were active within the last refill period.
 */
export function createCredentialLimiter(
  limits: Pick<GatewayLimits, 'ratePerSecond' | 'rateBurst' | 'concurrentWaits' | 'concurrentRuns'> &
    Partial<
      Pick<
        GatewayLimits,
        | 'runsPerMinute'
        | 'runBurst'
        | 'readBytesPerOperation'
        | 'concurrentCalls'
        | 'runEventsPerSecond'
        | 'runEventBurst'
      >
    >,
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
  // Runtime events of runs (without these limits, not counted).
  const eventBurst = limits.runEventBurst ?? Number.POSITIVE_INFINITY
  const eventsPerMs = (limits.runEventsPerSecond ?? Number.POSITIVE_INFINITY) / 1000
  const eventsLimited = Number.isFinite(eventBurst) && Number.isFinite(eventsPerMs)
  const refillEvents = (a: Account, t: number): void => {
    a.events = Math.min(eventBurst, a.events + (t - a.eventsRefilledAt) * eventsPerMs)
    a.eventsRefilledAt = t
  }
  /** The time an account's event bucket needs to be full again. */
  const eventsRefillMs = (a: Account): number => (eventsLimited ? (eventBurst - a.events) / eventsPerMs : 0)
  /** The largest read estimate: a bucket of a burst can always afford it once refilled. */
  const maxReadEstimate = limits.rateBurst / 2
  let sweptAt = now()
  const account = (username: string): Account => {
    const t = now()
    if (t - sweptAt > fullAfterMs && accounts.size > 0) {
      sweptAt = t
      for (const [name, a] of accounts)
        if (
          a.wait === 0 &&
          a.run === 0 &&
          a.call === 0 &&
          t - a.refilledAt >= fullAfterMs + debtMs(a) &&
          t - a.runsRefilledAt >= runsRefillMs(a) &&
          t - a.eventsRefilledAt >= eventsRefillMs(a) &&
          t - a.runEndedAt >= RUN_SHARE_LINGER_MS
        )
          accounts.delete(name)
    }
    let a = accounts.get(username)
    if (!a) {
      a = {
        tokens: limits.rateBurst,
        refilledAt: t,
        runTokens: runBurst,
        runsRefilledAt: t,
        events: eventBurst,
        eventsRefilledAt: t,
        readEstimate: 0,
        runEstimate: 0,
        wait: 0,
        run: 0,
        call: 0,
        runEndedAt: Number.NEGATIVE_INFINITY,
      }
      accounts.set(username, a)
    }
    a.tokens = Math.min(limits.rateBurst, a.tokens + ((t - a.refilledAt) / 1000) * limits.ratePerSecond)
    a.refilledAt = t
    return a
  }
  const cap: Record<SlotKind, number> = {
    wait: limits.concurrentWaits,
    run: limits.concurrentRuns,
    call: limits.concurrentCalls ?? Number.POSITIVE_INFINITY,
  }
  const tooMany: Record<SlotKind, string> = {
    wait: `Too many waiting calls for this credential (at most ${cap.wait} at once). Retry without waitMs, or after another wait returns.`,
    run: `Too many runs in progress for this credential (at most ${cap.run} at once). Retry once one of them has ended, or cancel one (gateway.session.get gives a running session's activeJob).`,
    call: `Too many calls in progress for this credential (at most ${cap.call} at once). Retry once one of them has returned.`,
  }
  const tooManyShared = (share: number): string =>
    `Too many runs in progress for this credential while other credentials run too (its share: ${share} at once of ${cap.run}). Retry once one of them has ended.`
  /** Other credentials with a run in progress, or whose last run ended just now. */
  const otherRunners = (a: Account, t: number): number => {
    let n = 0
    for (const b of accounts.values())
      if (b !== a && (b.run > 0 || t - b.runEndedAt < RUN_SHARE_LINGER_MS)) n++
    return n
  }
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
    reserveRead(username) {
      if (limits.readBytesPerOperation === undefined) return 0
      const a = account(username)
      const need = a.readEstimate
      if (need <= 0) return 0
      if (a.tokens < need)
        throw new RateLimited(
          'Rate limited: the calls of this credential read a lot from the runtime lately (each counts by size). Retry later.',
          Math.ceil(((need - a.tokens) / limits.ratePerSecond) * 1000),
        )
      a.tokens -= need
      return need
    },
    chargeRead(username, bytes, reserved = 0) {
      if (limits.readBytesPerOperation === undefined) return
      const a = account(username)
      const cost = Number.isFinite(bytes) && bytes > 0 ? bytes / limits.readBytesPerOperation : 0
      if (cost > reserved) a.tokens = Math.max(-limits.rateBurst, a.tokens - (cost - reserved))
      else a.tokens = Math.min(limits.rateBurst, a.tokens + (reserved - cost))
      // A call that read nothing (the catalog, a refused call) says nothing about what reads cost.
      if (cost > 0)
        a.readEstimate = Math.min(maxReadEstimate, Math.max(cost, a.readEstimate * ESTIMATE_DECAY))
    },
    acquire(username, kind) {
      const a = account(username)
      if (a[kind] >= cap[kind]) throw new RateLimited(tooMany[kind], 1000)
      // Runs share the runtime's one thread: while other credentials have runs in progress too
      // (or had one a moment ago, see RUN_SHARE_LINGER_MS), each may start one only below its
      // share of `concurrentRuns` (at least one).
      if (kind === 'run' && a.run > 0) {
        const others = otherRunners(a, now())
        const share = Math.max(1, Math.floor(cap.run / (others + 1)))
        if (others > 0 && a.run >= share) throw new RateLimited(tooManyShared(share), 1000)
      }
      const t = now()
      let reserved = 0
      if (kind === 'run') {
        // Both buckets are checked before either is taken from.
        if (Number.isFinite(runBurst)) {
          a.runTokens = Math.min(runBurst, a.runTokens + (t - a.runsRefilledAt) * runsPerMs)
          a.runsRefilledAt = t
          if (a.runTokens < 1)
            throw new RateLimited(
              `Too many runs started by this credential (at most ${limits.runsPerMinute} a minute, ${runBurst} at once). Retry later.`,
              Math.ceil((1 - a.runTokens) / runsPerMs),
            )
        }
        if (eventsLimited) {
          refillEvents(a, t)
          reserved = Math.min(a.runEstimate, eventBurst)
          // An account in debt waits it out even when its runs are expected to cost nothing.
          const need = Math.max(reserved, Number.MIN_VALUE)
          if (a.events < need)
            throw new RateLimited(
              `The runs of this credential have made the runtime work beyond its allowance (about ${limits.runEventsPerSecond} runtime events a second, ${eventBurst} at once; every streamed chunk counts). Retry later.`,
              Math.max(1000, Math.ceil((need - a.events) / eventsPerMs)),
            )
          a.events -= reserved
        }
        if (Number.isFinite(runBurst)) a.runTokens -= 1
      }
      a[kind]++
      let released = false
      let used = 0
      const events = (count: number): boolean => {
        if (released || !eventsLimited || kind !== 'run' || !(count > 0)) return false
        const beyond = Math.min(count, used + count - reserved)
        used += count
        if (beyond <= 0) return false
        refillEvents(a, now())
        a.events = Math.max(-eventBurst, a.events - beyond)
        return a.events <= -eventBurst
      }
      const release = (): void => {
        if (released) return
        released = true
        // Accounts holding a slot are never swept, so `a` is still the live one.
        a[kind]--
        if (kind === 'run' && a.run === 0) a.runEndedAt = now()
        if (kind === 'run' && eventsLimited) {
          refillEvents(a, now())
          if (used < reserved) a.events = Math.min(eventBurst, a.events + (reserved - used))
          a.runEstimate = Math.min(eventBurst, Math.max(used, a.runEstimate * ESTIMATE_DECAY))
        }
      }
      return Object.assign(release, { events })
    },
  }
}
