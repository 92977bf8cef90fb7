import { describe, expect, it } from 'vitest'
import { createCredentialLimiter, RateLimited, RUN_SHARE_LINGER_MS } from './limits.js'

describe('CredentialLimiter.charge', () => {
  const limits = { ratePerSecond: 1, rateBurst: 5, concurrentWaits: 1, concurrentRuns: 1 }

  it('takes more after the fact, into debt of at most one burst, which later calls wait out', () => {
    let t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    expect(limiter.take('a', 1)).toBeUndefined() // 4 left
    limiter.charge('a', 100) // capped: -5
    expect(limiter.take('a', 1)).toBe(6000) // from -5 to 1 takes 6 s at 1/s
    t += 6000
    expect(limiter.take('a', 1)).toBeUndefined()
    // Another credential is untouched; nothing or nonsense charges nothing.
    expect(limiter.take('b', 5)).toBeUndefined()
    limiter.charge('c', 0)
    limiter.charge('c', -3)
    limiter.charge('c', Number.NaN)
    expect(limiter.take('c', 5)).toBeUndefined()
  })

  it('chargeRead: one operation per readBytesPerOperation bytes read, fractions included; nothing without the limit', () => {
    const t = 0
    const limiter = createCredentialLimiter(
      { ...limits, rateBurst: 10, readBytesPerOperation: 1000 },
      () => t,
    )
    limiter.chargeRead('a', 2500) // 2.5 operations: 7.5 left
    expect(limiter.take('a', 8)).toBe(500)
    expect(limiter.take('a', 7)).toBeUndefined()
    limiter.chargeRead('a', 0)
    expect(limiter.take('a', 1)).toBe(500) // 0.5 left: half a second to one
    const unlimited = createCredentialLimiter({ ...limits, rateBurst: 10 }, () => t)
    unlimited.chargeRead('a', 1e12)
    expect(unlimited.take('a', 10)).toBeUndefined()
  })

  it('does not forget a debt when idle accounts are swept', () => {
    let t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    limiter.charge('a', 10) // -5: full again after 10 s
    t += 6000 // past a refill from empty (5 s), not past the debt
    expect(limiter.take('other', 1)).toBeUndefined() // sweeps idle accounts
    expect(limiter.take('a', 5)).toBe(4000) // 1 token back of the 5 asked: 4 s more
  })
})

describe('CredentialLimiter run starts', () => {
  const limits = {
    ratePerSecond: 100,
    rateBurst: 100,
    concurrentWaits: 10,
    concurrentRuns: 10,
    runsPerMinute: 6,
    runBurst: 2,
  }

  it('starts at most runBurst runs at once, then runsPerMinute; waits are not counted', () => {
    let t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    const releases = [limiter.acquire('a', 'run'), limiter.acquire('a', 'run')]
    limiter.acquire('a', 'wait')
    let refused: unknown
    try {
      limiter.acquire('a', 'run')
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(RateLimited)
    expect((refused as RateLimited).message).toMatch(/at most 6 a minute, 2 at once/)
    // 6 a minute: one run start comes back every 10 s.
    expect((refused as RateLimited).retryAfterMs).toBe(10_000)
    // Ending runs gives back run slots, not run starts.
    for (const release of releases) release()
    expect(() => limiter.acquire('a', 'run')).toThrow(RateLimited)
    t += 10_000
    limiter.acquire('a', 'run')
    expect(() => limiter.acquire('a', 'run')).toThrow(RateLimited)
    // Another credential has its own run starts, and reads are not affected.
    limiter.acquire('b', 'run')
    expect(limiter.take('a', 1)).toBeUndefined()
  })

  it('does not forget spent run starts when idle accounts are swept', () => {
    let t = 0
    const limiter = createCredentialLimiter({ ...limits, runsPerMinute: 1 }, () => t)
    limiter.acquire('a', 'run')()
    limiter.acquire('a', 'run')()
    // Past a refill of the operation bucket (1 s), not of the run starts (1 a minute).
    t += 5_000
    expect(limiter.take('other', 1)).toBeUndefined() // sweeps idle accounts
    expect(() => limiter.acquire('a', 'run')).toThrow(RateLimited)
    t += 60_000
    limiter.acquire('a', 'run')
  })

  it('leaves run starts unbounded when the limiter is given no run limits', () => {
    const limiter = createCredentialLimiter(
      { ratePerSecond: 1, rateBurst: 1, concurrentWaits: 1, concurrentRuns: 100 },
      () => 0,
    )
    for (let i = 0; i < 50; i++) limiter.acquire('a', 'run')
  })
})

describe('CredentialLimiter read estimates', () => {
  const limits = {
    ratePerSecond: 1,
    rateBurst: 20,
    concurrentWaits: 1,
    concurrentRuns: 1,
    readBytesPerOperation: 1000,
  }

  it('takes what calls lately read ahead of the next call, refuses it when the bucket holds less, and settles after', () => {
    const t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    // Nothing read yet: nothing taken ahead.
    expect(limiter.reserveRead('a')).toBe(0)
    limiter.chargeRead('a', 6000, 0) // 14 left; calls are now expected to read 6 operations
    expect(limiter.reserveRead('a')).toBe(6) // 8 left
    expect(limiter.reserveRead('a')).toBe(6) // 2 left
    let refused: unknown
    try {
      limiter.reserveRead('a')
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(RateLimited)
    expect((refused as RateLimited).retryAfterMs).toBe(4000) // 4 more tokens at 1/s
    // A call that read less than was taken gets the rest back; one that read more pays it.
    limiter.chargeRead('a', 1000, 6) // +5: 7 left
    limiter.chargeRead('a', 8000, 6) // -2: 5 left
    expect(limiter.take('a', 5)).toBeUndefined()
    expect(limiter.take('a', 1)).toBe(1000)
    // Another credential has its own estimate.
    expect(limiter.reserveRead('b')).toBe(0)
  })

  it('forgets a costly past by half per call that reads, not per call that reads nothing', () => {
    const limiter = createCredentialLimiter(limits, () => 0)
    limiter.chargeRead('a', 8000, 0) // expects 8
    limiter.chargeRead('a', 0, 0) // the catalog: still 8
    expect(limiter.reserveRead('a')).toBe(8)
    limiter.chargeRead('a', 100, 8) // read 0.1: 4 expected
    expect(limiter.reserveRead('a')).toBe(4)
  })

  it('expects at most half a burst, so a huge read does not lock the credential out', () => {
    let t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    limiter.chargeRead('a', 1e9, 0) // in debt by a burst; expects 10 (half of 20)
    t += 30_000 // from -20 to 10
    expect(limiter.reserveRead('a')).toBe(10)
  })

  it('holds at most concurrentCalls call slots at once', () => {
    const limiter = createCredentialLimiter({ ...limits, concurrentCalls: 2 }, () => 0)
    const first = limiter.acquire('a', 'call')
    limiter.acquire('a', 'call')
    expect(() => limiter.acquire('a', 'call')).toThrow(/at most 2 at once/)
    // Waits and other credentials are not counted.
    limiter.acquire('a', 'wait')
    limiter.acquire('b', 'call')
    first()
    limiter.acquire('a', 'call')
  })

  it('shares concurrentRuns between the credentials that have runs in progress or just had one (one each at least)', () => {
    let t = 0
    const limiter = createCredentialLimiter(
      { ratePerSecond: 100, rateBurst: 100, concurrentWaits: 10, concurrentRuns: 4 },
      () => t,
    )
    const a = [limiter.acquire('a', 'run'), limiter.acquire('a', 'run'), limiter.acquire('a', 'run')]
    // Another credential starts its first run whatever the others hold...
    const b1 = limiter.acquire('b', 'run')
    // ...and from then on each holds at most its share, 4 / 2; one above it keeps what it holds.
    expect(() => limiter.acquire('a', 'run')).toThrow(/its share: 2 at once of 4/)
    const b2 = limiter.acquire('b', 'run')
    expect(() => limiter.acquire('b', 'run')).toThrow(RateLimited)
    // A third credential: a share of 1 each.
    const c = limiter.acquire('c', 'run')
    expect(() => limiter.acquire('c', 'run')).toThrow(/its share: 1 at once of 4/)
    // Ending runs frees the share, but not in the gap between a credential's runs: b and c, whose
    // runs have just ended, still count for RUN_SHARE_LINGER_MS.
    c()
    b1()
    expect(() => limiter.acquire('a', 'run')).toThrow(/share: 1/) // b holds one, c just ended one
    b2()
    t += RUN_SHARE_LINGER_MS - 1
    expect(() => limiter.acquire('a', 'run')).toThrow(/share: 1/)
    // b runs again within the linger: it still counts, and c (ended long enough ago) no longer does.
    t += 1
    const b3 = limiter.acquire('b', 'run')
    expect(() => limiter.acquire('a', 'run')).toThrow(/share: 2/)
    b3()
    // Once the others' runs are over for the linger, a is alone again, up to 4.
    t += RUN_SHARE_LINGER_MS
    a.push(limiter.acquire('a', 'run'))
    expect(() => limiter.acquire('a', 'run')).toThrow(/at most 4 at once/)
    // Waits and calls are not shared.
    limiter.acquire('b', 'wait')
    limiter.acquire('b', 'call')
    expect(() => limiter.acquire('a', 'run')).toThrow(/at most 4 at once/)
    for (const release of a) release()
  })

  it('lets a credential with no run in progress start one whatever the others hold or just held', () => {
    let t = 0
    const limiter = createCredentialLimiter(
      { ratePerSecond: 100, rateBurst: 100, concurrentWaits: 10, concurrentRuns: 2 },
      () => t,
    )
    const held = ['a', 'b', 'c'].map((name) => limiter.acquire(name, 'run'))
    for (const release of held) release()
    t += 1
    // Three credentials just ended runs: d still gets one, and a one again.
    limiter.acquire('d', 'run')
    limiter.acquire('a', 'run')
    expect(() => limiter.acquire('a', 'run')).toThrow(/its share: 1 at once of 2/)
  })
})

describe('CredentialLimiter run events', () => {
  const limits = {
    ratePerSecond: 100,
    rateBurst: 100,
    concurrentWaits: 10,
    concurrentRuns: 10,
    runEventsPerSecond: 100,
    runEventBurst: 1000,
  }
  const refusal = (fn: () => unknown): RateLimited => {
    try {
      fn()
    } catch (error) {
      if (error instanceof RateLimited) return error
      throw error
    }
    throw new Error('not refused')
  }

  it('counts what runs cause into a bucket; a run starts only while it holds what runs lately cost', () => {
    let t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    // Nothing known yet: runs start while the bucket is not in debt.
    const a = limiter.acquire('a', 'run')
    const b = limiter.acquire('a', 'run')
    a.events(900)
    b.events(500) // 1 000 - 1 400: 400 in debt
    const inDebt = refusal(() => limiter.acquire('a', 'run'))
    expect(inDebt.message).toMatch(/100 runtime events a second, 1000 at once/)
    expect(inDebt.retryAfterMs).toBe(4000)
    a()
    b()
    // The last run to end cost 500 (more than half the 900 before): 500 is taken ahead now.
    t += 4000 // at 0
    expect(refusal(() => limiter.acquire('a', 'run')).retryAfterMs).toBe(5000)
    t += 5000 // at 500
    const c = limiter.acquire('a', 'run') // 0 left, 500 taken
    c.events(200)
    expect(() => limiter.acquire('a', 'run')).toThrow(RateLimited)
    c() // 300 back; runs now expected to cost 250
    limiter.acquire('a', 'run')
    // Another credential's runs are not affected; waits and reads are not counted.
    limiter.acquire('b', 'run')
    expect(limiter.take('a', 1)).toBeUndefined()
  })

  it('tells the runs in progress once their credential is a whole burst in debt, and only then', () => {
    let t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    const a = limiter.acquire('a', 'run')
    const b = limiter.acquire('a', 'run')
    const other = limiter.acquire('b', 'run')
    expect(a.events(1000)).toBe(false) // at 0
    expect(b.events(999)).toBe(false) // 999 in debt
    t += 10 // 1 back: 998 in debt
    expect(a.events(1)).toBe(false) // 999 in debt
    expect(a.events(1)).toBe(true) // 1 000 in debt: the floor
    expect(b.events(1)).toBe(true) // still at the floor, for every run of the credential
    // Another credential has its own bucket.
    expect(other.events(1500)).toBe(false)
    expect(other.events(500)).toBe(true)
    t += 1000 // 100 back
    expect(a.events(50)).toBe(false)
    a()
    expect(a.events(1e6)).toBe(false) // released: counts nothing, tells nothing
  })

  it('charges nothing after a release, and nothing for slots other than runs', () => {
    const limiter = createCredentialLimiter(limits, () => 0)
    const run = limiter.acquire('a', 'run')
    run()
    expect(run.events(5000)).toBe(false)
    expect(limiter.acquire('a', 'wait').events(5000)).toBe(false)
    expect(limiter.acquire('a', 'call').events(5000)).toBe(false)
    limiter.acquire('a', 'run')
  })

  it('does not forget a debt of run events when idle accounts are swept', () => {
    let t = 0
    const limiter = createCredentialLimiter({ ...limits, rateBurst: 1 }, () => t)
    const run = limiter.acquire('a', 'run')
    run.events(1500)
    run()
    t += 5_000 // past a refill of the operation bucket (10 ms), not of the events (15 s)
    expect(limiter.take('other', 1)).toBeUndefined() // sweeps idle accounts
    expect(() => limiter.acquire('a', 'run')).toThrow(RateLimited)
  })
})
