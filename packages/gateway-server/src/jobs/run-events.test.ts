import { describe, expect, it } from 'vitest'
import type { RuntimeActivity } from '../runtime/port.js'
import { createRunEventMeter } from './run-events.js'

/** A port whose activity the test emits by hand. */
function fakePort() {
  const handlers = new Set<(a: RuntimeActivity) => void>()
  return {
    port: {
      onActivity(handler: (a: RuntimeActivity) => void) {
        handlers.add(handler)
        return () => handlers.delete(handler)
      },
    },
    emit: (a: RuntimeActivity) => {
      for (const h of handlers) h(a)
    },
    subscribed: () => handlers.size,
  }
}

describe('createRunEventMeter', () => {
  it('counts the tracked session and the sessions created under it, nothing else, until stopped', () => {
    const { port, emit, subscribed } = fakePort()
    const meter = createRunEventMeter(port)
    if (!meter) throw new Error('no meter')
    expect(subscribed()).toBe(0)
    let counted = 0
    const stop = meter.track('s1', (n) => {
      counted += n
    })
    expect(subscribed()).toBe(1)
    emit({ sessionId: 's1' })
    emit({ sessionId: 'other' })
    emit({ sessionId: 'child', parentId: 's1' }) // a subagent's session
    emit({ sessionId: 'child' })
    emit({ sessionId: 'grandchild', parentId: 'child' })
    emit({ sessionId: 'grandchild' })
    emit({ sessionId: 'stranger', parentId: 'other' })
    expect(counted).toBe(5)
    stop()
    stop()
    emit({ sessionId: 's1' })
    emit({ sessionId: 'child' })
    expect(counted).toBe(5)
    expect(subscribed()).toBe(0)
  })

  it('charges the newest of two overlapping tracks of one session', () => {
    const { port, emit } = fakePort()
    const meter = createRunEventMeter(port)
    if (!meter) throw new Error('no meter')
    const counts = { old: 0, next: 0 }
    const stopOld = meter.track('s', (n) => {
      counts.old += n
    })
    emit({ sessionId: 's' })
    const stopNext = meter.track('s', (n) => {
      counts.next += n
    })
    emit({ sessionId: 's' })
    stopOld()
    emit({ sessionId: 's' })
    stopNext()
    emit({ sessionId: 's' })
    expect(counts).toEqual({ old: 1, next: 2 })
  })

  it('is absent for a port that reports no activity', () => {
    expect(createRunEventMeter({})).toBeUndefined()
  })
})
