import { describe, expect, it } from 'vitest'
import type { RuntimeActivity } from '../runtime/port.js'
import { createRunEventMeter, RUN_EVENT_BYTES, RUN_STEP_EVENTS } from './run-events.js'

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
    emit({ size: 0, sessionId: 's1' })
    emit({ size: 0, sessionId: 'other' })
    emit({ size: 0, sessionId: 'child', parentId: 's1' }) // a subagent's session
    emit({ size: 0, sessionId: 'child' })
    emit({ size: 0, sessionId: 'grandchild', parentId: 'child' })
    emit({ size: 0, sessionId: 'grandchild' })
    emit({ size: 0, sessionId: 'stranger', parentId: 'other' })
    expect(counted).toBe(5)
    stop()
    stop()
    emit({ size: 0, sessionId: 's1' })
    emit({ size: 0, sessionId: 'child' })
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
    emit({ size: 0, sessionId: 's' })
    const stopNext = meter.track('s', (n) => {
      counts.next += n
    })
    emit({ size: 0, sessionId: 's' })
    stopOld()
    emit({ size: 0, sessionId: 's' })
    stopNext()
    emit({ size: 0, sessionId: 's' })
    expect(counts).toEqual({ old: 1, next: 2 })
  })

  it('weighs each event by its size (one more per RUN_EVENT_BYTES of its data) and a step start by RUN_STEP_EVENTS', () => {
    const { port, emit } = fakePort()
    const meter = createRunEventMeter(port)
    if (!meter) throw new Error('no meter')
    let counted = 0
    meter.track('s', (n) => {
      counted += n
    })
    emit({ sessionId: 's', size: RUN_EVENT_BYTES * 4 })
    emit({ sessionId: 's', size: RUN_EVENT_BYTES / 2 })
    emit({ sessionId: 's', size: 0, step: true })
    expect(counted).toBe(5 + 1.5 + 1 + RUN_STEP_EVENTS)
  })

  it('is absent for a port that reports no activity', () => {
    expect(createRunEventMeter({})).toBeUndefined()
  })
})
