import { describe, expect, it } from 'vitest'
import { fakeEvents } from './event-source.test-helpers.js'
import { createStatusView } from './status-view.js'

/** A stand-in for the upstream client's status call and event stream, driven by the test. */
function fakeSource(initial: Record<string, { type: string }>) {
  const stream = fakeEvents()
  let snapshot = initial
  let release: (() => void) | undefined
  let gate: Promise<void> | undefined
  const source = {
    events: stream.events,
    sessionStatus: async () => {
      if (gate) await gate
      return snapshot
    },
  }
  return {
    source,
    connect: stream.connect,
    emit: stream.emit,
    setSnapshot: (s: Record<string, { type: string }>) => {
      snapshot = s
    },
    holdLoads: () => {
      gate = new Promise((r) => {
        release = r
      })
    },
    releaseLoads: () => {
      gate = undefined
      release?.()
    },
  }
}

const settle = () => new Promise((r) => setImmediate(r))

describe('createStatusView', () => {
  it('knows nothing until the stream is connected and the map is loaded', async () => {
    const f = fakeSource({ s1: { type: 'busy' } })
    const view = createStatusView(f.source)
    expect(view.get('s1')).toBeUndefined()
    f.connect(true)
    await settle()
    expect(view.get('s1')).toBe('busy')
    expect(view.get('other')).toBe('idle')
    view.close()
  })

  it('follows status events: busy, retry, idle, deleted', async () => {
    const f = fakeSource({})
    const view = createStatusView(f.source)
    f.connect(true)
    await settle()
    f.emit('session.status', { sessionID: 's1', status: { type: 'busy' } })
    expect(view.get('s1')).toBe('busy')
    f.emit('session.status', { sessionID: 's1', status: { type: 'retry', attempt: 1 } })
    expect(view.get('s1')).toBe('retry')
    f.emit('session.idle', { sessionID: 's1' })
    expect(view.get('s1')).toBe('idle')
    f.emit('session.status', { sessionID: 's2', status: { type: 'busy' } })
    f.emit('session.deleted', { sessionID: 's2' })
    expect(view.all()?.size).toBe(0)
    view.close()
  })

  it('lets an event that arrives during the load win over the loaded value', async () => {
    const f = fakeSource({ s1: { type: 'busy' } })
    const view = createStatusView(f.source)
    f.holdLoads()
    f.connect(true)
    f.emit('session.idle', { sessionID: 's1' })
    f.releaseLoads()
    await settle()
    expect(view.get('s1')).toBe('idle')
    view.close()
  })

  it('forgets everything when the stream drops and reloads on reconnect', async () => {
    const f = fakeSource({ s1: { type: 'busy' } })
    const view = createStatusView(f.source)
    f.connect(true)
    await settle()
    f.connect(false)
    expect(view.get('s1')).toBeUndefined()
    f.setSnapshot({})
    f.connect(true)
    await settle()
    expect(view.get('s1')).toBe('idle')
    view.close()
  })

  it('stops listening when closed', async () => {
    const f = fakeSource({})
    const view = createStatusView(f.source)
    f.connect(true)
    await settle()
    view.close()
    f.emit('session.status', { sessionID: 's1', status: { type: 'busy' } })
    expect(view.get('s1')).toBeUndefined()
  })
})
