import { describe, expect, it } from 'vitest'
import { backoffDelay, sleep } from './backoff.ts'

describe('backoffDelay', () => {
  it('doubles from the initial delay and caps, with jitter in the upper half', () => {
    expect(backoffDelay(0, 250, 5_000, () => 0)).toBe(125)
    expect(backoffDelay(0, 250, 5_000, () => 0.999)).toBeCloseTo(249.9, 1)
    expect(backoffDelay(3, 250, 5_000, () => 0)).toBe(1_000)
    expect(backoffDelay(10, 250, 5_000, () => 0)).toBe(2_500)
    expect(backoffDelay(10, 250, 5_000, () => 0.999)).toBeLessThan(5_000)
    expect(backoffDelay(10_000, 250, 5_000, () => 0.5)).toBe(3_750)
  })
})

describe('sleep', () => {
  it('resolves early when the signal aborts', async () => {
    const controller = new AbortController()
    const started = Date.now()
    const done = sleep(10_000, controller.signal)
    controller.abort()
    await done
    expect(Date.now() - started).toBeLessThan(1_000)
  })
})
