import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { captureLogger } from '../../test/helpers.js'
import { createRefusalLog } from './refusal-log.js'

describe('createRefusalLog', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('logs up to perSecond refusals a second one by one, then one line counting the rest by status and reason', () => {
    const logs = captureLogger()
    let t = 0
    const log = createRefusalLog(logs.logger, '/mcp', { perSecond: 3, now: () => t })
    for (let i = 0; i < 10; i++) log.refused(401, i % 2 ? 'missing' : 'invalid', 'unauthorized', `r${i}`)
    log.refused(403, 'origin', 'origin denied', 'r10')
    const single = () => logs.lines().filter((l) => l.event === 'http')
    expect(single()).toHaveLength(3)
    expect(single()[0]).toMatchObject({ status: 401, reason: 'invalid', requestId: 'r0', path: '/mcp' })
    // The second ends with no more requests: the summary is written anyway.
    t = 1000
    vi.advanceTimersByTime(1000)
    const summaries = logs.lines().filter((l) => l.event === 'http_refusals_unlogged')
    expect(summaries).toEqual([
      expect.objectContaining({
        level: 40,
        count: 8,
        byStatusAndReason: { '401/missing': 4, '401/invalid': 3, '403/origin': 1 },
      }),
    ])
    // A new second logs one by one again.
    t = 1500
    log.refused(401, 'missing', 'unauthorized', 'r11')
    expect(single()).toHaveLength(4)
    log.flush()
    expect(logs.lines().filter((l) => l.event === 'http_refusals_unlogged')).toHaveLength(1)
  })
})
