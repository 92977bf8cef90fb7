import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { EventStream } from './event-stream.ts'
import type { RawEvent } from './schemas.ts'
import { type CheckWake, createSessionEvents, type SessionEventsOptions } from './session-events.ts'

// When waits look at the runtime (issue 18): polls while the stream is not live (one per
// session, shared), a read after it is live again, a status probe of a silent live stream, and
// nothing else while events flow. Driven with fake timers over a stream the test controls.

/** A stream the test drives: `live(true|false)` and `emit(type, properties)`. */
function fakeStream() {
  const listeners = new Set<(event: RawEvent, size: number) => void>()
  const connection = new Set<(connected: boolean) => void>()
  let connected = false
  const stream: EventStream = {
    subscribe(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    onConnectionChange(listener) {
      connection.add(listener)
      return () => void connection.delete(listener)
    },
    get connected() {
      return connected
    },
    lastError: undefined,
    close() {
      listeners.clear()
      connection.clear()
    },
  }
  return {
    stream,
    live(value: boolean) {
      if (connected === value) return
      connected = value
      for (const listener of [...connection]) listener(value)
    },
    emit(type: string, properties: Record<string, unknown> = {}) {
      const event = { type, properties }
      for (const listener of [...listeners]) listener(event, JSON.stringify(event).length)
    },
  }
}

const S = 'ses_a'

/** A check that never finds its state, recording the wakes it was told (and taking `ms`). */
function recorder(ms = 0) {
  const wakes: number[] = []
  const check = async (wake: CheckWake): Promise<undefined> => {
    wakes.push(wake.sequence)
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
    return undefined
  }
  return { wakes, check }
}

function setup(extra: Partial<SessionEventsOptions> = {}) {
  const fake = fakeStream()
  const probes: number[] = []
  let statuses: Record<string, { type: string }> = {}
  const events = createSessionEvents(fake.stream, {
    pollIntervalMs: 1_000,
    probeAfterMs: 2_000,
    random: () => 0.5,
    statuses: async () => {
      probes.push(Date.now())
      return statuses
    },
    ...extra,
  })
  return {
    ...fake,
    events,
    probes,
    setStatuses(next: Record<string, { type: string }>) {
      statuses = next
    },
  }
}

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('waits while the stream is not live', () => {
  it('poll once per session for all its waits, every 0.5–1 × pollMs, each poll a new wake', async () => {
    const t = setup()
    const a = recorder()
    const b = recorder()
    const c = recorder()
    void t.events.waitUntil(S, a.check, { timeoutMs: 10_000 })
    void t.events.waitUntil(S, b.check, { timeoutMs: 10_000 })
    void t.events.waitUntil(S, c.check, { timeoutMs: 10_000, pollMs: 5_000 })
    await vi.advanceTimersByTimeAsync(0)
    expect(a.wakes).toHaveLength(1)
    // random 0.5: a poll at 750 ms (the shortest interval of the session's waits), then every 750 ms.
    await vi.advanceTimersByTimeAsync(749)
    expect(a.wakes).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(a.wakes).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(750 * 3)
    expect(a.wakes).toHaveLength(5)
    // Every wait runs at every poll, told the same wake (so the gateway shares one read among them).
    expect(b.wakes).toEqual(a.wakes)
    expect(c.wakes).toEqual(a.wakes)
    expect(new Set(a.wakes).size).toBe(5)
  })

  it('a session whose waits joined at different times still polls once per interval', async () => {
    const t = setup()
    const first = recorder()
    void t.events.waitUntil(S, first.check, { timeoutMs: 10_000 })
    await vi.advanceTimersByTimeAsync(300)
    const later = recorder()
    void t.events.waitUntil(S, later.check, { timeoutMs: 10_000 })
    await vi.advanceTimersByTimeAsync(4_000)
    // 4.3 s at one poll per 750 ms: 5 polls, each seen by both waits (the later one had its own first check).
    expect(first.wakes).toHaveLength(1 + 5)
    expect(later.wakes).toHaveLength(1 + 5)
    expect(later.wakes.slice(1)).toEqual(first.wakes.slice(1))
  })

  it('jitters the interval within [pollMs/2, pollMs]', async () => {
    let r = 0
    const t = setup({ random: () => r })
    const a = recorder()
    void t.events.waitUntil(S, a.check, { timeoutMs: 10_000 })
    await vi.advanceTimersByTimeAsync(500) // random 0: half the interval
    expect(a.wakes).toHaveLength(2)
    r = 0.999
    await vi.advanceTimersByTimeAsync(500) // the next one was drawn at 0: 500 ms
    expect(a.wakes).toHaveLength(3)
    await vi.advanceTimersByTimeAsync(998)
    expect(a.wakes).toHaveLength(3)
    await vi.advanceTimersByTimeAsync(2)
    expect(a.wakes).toHaveLength(4)
  })

  it('spaces the polls of many sessions: about 10–13 a second at most, all sessions together', async () => {
    const t = setup()
    const checks = Array.from({ length: 30 }, (_, i) => {
      const r = recorder()
      void t.events.waitUntil(`ses_${i}`, r.check, { timeoutMs: 60_000 })
      return r
    })
    await vi.advanceTimersByTimeAsync(6_000)
    // 30 sessions: each polls every 2.9 s × [0.5, 1] (here 2.175 s): twice in 6 s, not eight times.
    for (const r of checks) expect(r.wakes).toHaveLength(1 + 2)
  })

  it('arms the next poll only once the checks are over (a slow runtime is not piled on)', async () => {
    const t = setup()
    const slow = recorder(3_000)
    void t.events.waitUntil(S, slow.check, { timeoutMs: 20_000 })
    await vi.advanceTimersByTimeAsync(10_000)
    // Each round: 3 s of check, then 750 ms to the next poll.
    expect(slow.wakes.length).toBeLessThanOrEqual(3)
  })

  it('never outlives the deadline, even with a check in flight', async () => {
    const t = setup()
    const slow = recorder(5_000)
    let settled: unknown = 'pending'
    void t.events.waitUntil(S, slow.check, { timeoutMs: 1_200 }).then((value) => {
      settled = value
    })
    await vi.advanceTimersByTimeAsync(1_199)
    expect(settled).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(settled).toBeUndefined()
  })

  it('resolves at the first poll that finds the state', async () => {
    const t = setup()
    let done = false
    const result = t.events.waitUntil(S, async () => (done ? 'found' : undefined), { timeoutMs: 30_000 })
    await vi.advanceTimersByTimeAsync(2_000)
    done = true
    await vi.advanceTimersByTimeAsync(750)
    expect(await result).toBe('found')
  })
})

describe('the return to live', () => {
  it('checks every wait once, with a wake newer than any before it (no read of the gap is reused), then stops polling', async () => {
    const t = setup()
    const a = recorder()
    void t.events.waitUntil(S, a.check, { timeoutMs: 60_000 })
    void t.events.waitUntil('ses_b', recorder().check, { timeoutMs: 60_000 })
    await vi.advanceTimersByTimeAsync(2_000)
    const before = t.events.sequence
    const polls = a.wakes.length
    t.live(true)
    await vi.advanceTimersByTimeAsync(0)
    expect(a.wakes).toHaveLength(polls + 1)
    expect(a.wakes.at(-1)).toBeGreaterThan(before)
    // Live and no event for this session: no more checks (heartbeats do not wake it).
    for (let i = 0; i < 5; i++) {
      t.emit('server.heartbeat')
      await vi.advanceTimersByTimeAsync(1_500)
    }
    expect(a.wakes).toHaveLength(polls + 1)
  })

  it('starts polling when the stream stops being live, and reports both edges to its own listeners after the waits', async () => {
    const t = setup()
    t.live(true)
    const a = recorder()
    void t.events.waitUntil(S, a.check, { timeoutMs: 60_000 })
    const seen: Array<[boolean, number]> = []
    t.events.onConnectionChange((live) => seen.push([live, a.wakes.length]))
    await vi.advanceTimersByTimeAsync(0)
    expect(a.wakes).toHaveLength(1)
    t.live(false)
    await vi.advanceTimersByTimeAsync(750)
    expect(a.wakes).toHaveLength(2)
    t.live(true)
    expect(seen).toEqual([
      [false, 1],
      [true, 3],
    ])
  })

  it('wakes a wait on its session events while live, never by the clock', async () => {
    const t = setup({ statuses: undefined })
    t.live(true)
    const a = recorder()
    void t.events.waitUntil(S, a.check, { timeoutMs: 60_000 })
    await vi.advanceTimersByTimeAsync(30_000)
    expect(a.wakes).toHaveLength(1)
    t.emit('session.status', { sessionID: S, status: { type: 'busy' } })
    await vi.advanceTimersByTimeAsync(0)
    expect(a.wakes).toHaveLength(2)
  })

  it('with afterBurst: checks a burst of events once, after the whole burst (an answer completed, then idle)', async () => {
    const t = setup({ statuses: undefined })
    t.live(true)
    // What the check sees of the runtime: the state the events announced so far.
    let announced = 'busy'
    const seen: string[] = []
    const wakes: number[] = []
    void t.events.waitUntil(
      S,
      async (wake) => {
        seen.push(announced)
        wakes.push(wake.sequence)
        return undefined
      },
      { timeoutMs: 60_000, afterBurst: true },
    )
    await vi.advanceTimersByTimeAsync(0)
    expect(seen).toEqual(['busy'])
    const before = t.events.sequence
    t.emit('message.updated', { sessionID: S, info: { id: 'msg_a', sessionID: S } })
    announced = 'idle'
    t.emit('session.status', { sessionID: S, status: { type: 'idle' } })
    t.emit('session.idle', { sessionID: S })
    await vi.advanceTimersByTimeAsync(0)
    expect(seen).toEqual(['busy', 'idle'])
    expect(wakes[1]).toBe(before + 3)
  })

  it('without afterBurst: checks at the first event of a burst (a check that must see each transition)', async () => {
    const t = setup({ statuses: undefined })
    t.live(true)
    let announced = 'idle'
    const seen: string[] = []
    void t.events.waitUntil(
      S,
      async () => {
        seen.push(announced)
        return undefined
      },
      { timeoutMs: 60_000 },
    )
    await vi.advanceTimersByTimeAsync(0)
    announced = 'busy'
    t.emit('session.status', { sessionID: S, status: { type: 'busy' } })
    announced = 'idle'
    t.emit('session.status', { sessionID: S, status: { type: 'idle' } })
    await vi.advanceTimersByTimeAsync(0)
    expect(seen.slice(0, 2)).toEqual(['idle', 'busy'])
  })
})

describe('the status probe of a silent live stream', () => {
  it('reads the statuses once per 2 s of silence while waits are pending, not while events flow or without waits', async () => {
    const t = setup()
    t.live(true)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(t.probes).toHaveLength(0) // no wait pending
    // Waits that just began have just read for themselves: the first probe 2 s after them.
    void t.events.waitUntil(S, recorder().check, { timeoutMs: 60_000 })
    void t.events.waitUntil('ses_b', recorder().check, { timeoutMs: 60_000 })
    await vi.advanceTimersByTimeAsync(1_999)
    expect(t.probes).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(t.probes).toHaveLength(1) // one for both sessions
    await vi.advanceTimersByTimeAsync(4_000)
    expect(t.probes).toHaveLength(3)
    // Events every 500 ms: the stream is not silent, no probe.
    for (let i = 0; i < 20; i++) {
      t.emit('message.part.updated', { sessionID: 'ses_other' })
      await vi.advanceTimersByTimeAsync(500)
    }
    expect(t.probes).toHaveLength(3)
  })

  it('wakes the waits of a session whose run ended without its event, and only those', async () => {
    const t = setup()
    t.live(true)
    const a = recorder()
    const b = recorder()
    void t.events.waitUntil(S, a.check, { timeoutMs: 60_000 })
    void t.events.waitUntil('ses_b', b.check, { timeoutMs: 60_000 })
    t.emit('session.status', { sessionID: S, status: { type: 'busy' } })
    t.emit('session.status', { sessionID: 'ses_b', status: { type: 'busy' } })
    t.setStatuses({ [S]: { type: 'busy' }, ses_b: { type: 'busy' } })
    await vi.advanceTimersByTimeAsync(0)
    const [aBefore, bBefore] = [a.wakes.length, b.wakes.length]
    await vi.advanceTimersByTimeAsync(2_000)
    expect(t.probes).toHaveLength(1)
    expect([a.wakes.length, b.wakes.length]).toEqual([aBefore, bBefore]) // as the events said
    // S ends; its events are lost (a stall not detected yet).
    t.setStatuses({ ses_b: { type: 'busy' } })
    const sequence = t.events.sequence
    await vi.advanceTimersByTimeAsync(2_000)
    expect(a.wakes).toHaveLength(aBefore + 1)
    expect(a.wakes.at(-1)).toBeGreaterThan(sequence)
    expect(b.wakes).toHaveLength(bBefore)
    // Told once: the next probes find what the last one did.
    await vi.advanceTimersByTimeAsync(6_000)
    expect(a.wakes).toHaveLength(aBefore + 1)
  })

  it('with no status event seen yet: wakes for an idle session (it may have ended unseen), not for a busy one', async () => {
    const t = setup()
    t.live(true)
    const idle = recorder()
    const busy = recorder()
    void t.events.waitUntil('ses_idle', idle.check, { timeoutMs: 60_000 })
    void t.events.waitUntil('ses_busy', busy.check, { timeoutMs: 60_000 })
    t.setStatuses({ ses_busy: { type: 'busy' } })
    await vi.advanceTimersByTimeAsync(2_000)
    expect(idle.wakes).toHaveLength(2)
    expect(busy.wakes).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(4_000)
    expect(idle.wakes).toHaveLength(2)
    expect(busy.wakes).toHaveLength(1)
  })

  it('ignores what a status event reported while the probe was in flight', async () => {
    let answer: (value: Record<string, { type: string }>) => void = () => undefined
    const t = setup({
      statuses: () =>
        new Promise((resolve) => {
          answer = resolve
        }),
    })
    t.live(true)
    const a = recorder()
    void t.events.waitUntil(S, a.check, { timeoutMs: 60_000 })
    t.emit('session.status', { sessionID: S, status: { type: 'busy' } })
    await vi.advanceTimersByTimeAsync(2_000)
    const before = a.wakes.length
    // The run ends and its event arrives while the probe (which read it still busy) is answered.
    t.emit('session.idle', { sessionID: S })
    await vi.advanceTimersByTimeAsync(0)
    expect(a.wakes).toHaveLength(before + 1)
    answer({ [S]: { type: 'busy' } })
    await vi.advanceTimersByTimeAsync(0)
    expect(a.wakes).toHaveLength(before + 1)
  })

  it('a failed probe is tried again after the next 2 s of silence', async () => {
    let calls = 0
    const t = setup({
      statuses: async () => {
        calls++
        throw new Error('busy runtime')
      },
    })
    t.live(true)
    void t.events.waitUntil(S, recorder().check, { timeoutMs: 60_000 })
    await vi.advanceTimersByTimeAsync(6_000)
    expect(calls).toBe(3)
  })

  it('does not probe while the stream is not live (the polls look instead)', async () => {
    const t = setup()
    void t.events.waitUntil(S, recorder().check, { timeoutMs: 60_000 })
    await vi.advanceTimersByTimeAsync(10_000)
    expect(t.probes).toHaveLength(0)
  })
})

describe('close', () => {
  it('settles pending waits and leaves no timer behind', async () => {
    const t = setup()
    const pending = t.events.waitUntil(S, recorder().check, { timeoutMs: 60_000 })
    await vi.advanceTimersByTimeAsync(100)
    t.events.close()
    expect(await pending).toBeUndefined()
    expect(vi.getTimerCount()).toBe(0)
  })
})
