import { describe, expect, it } from 'vitest'
import { createCredentialLimiter, RateLimited } from './limits.js'

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
