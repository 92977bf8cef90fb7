import { describe, expect, it } from 'vitest'
import { createCredentialLimiter } from './limits.js'

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

  it('does not forget a debt when idle accounts are swept', () => {
    let t = 0
    const limiter = createCredentialLimiter(limits, () => t)
    limiter.charge('a', 10) // -5: full again after 10 s
    t += 6000 // past a refill from empty (5 s), not past the debt
    expect(limiter.take('other', 1)).toBeUndefined() // sweeps idle accounts
    expect(limiter.take('a', 5)).toBe(4000) // 1 token back of the 5 asked: 4 s more
  })
})
