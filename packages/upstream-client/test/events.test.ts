import { HttpResponse, http } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import type { SessionEvent, UpstreamClient } from '../src/index.ts'
import { basicToken, useFakeRuntime } from './support/msw.ts'

const { fake, server, client } = useFakeRuntime({ password: 'pw-for-events-test' })
const fast = { initialBackoffMs: 10, maxBackoffMs: 50 }

async function until<T>(check: () => T | undefined, timeoutMs = 3_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const connected = (c: UpstreamClient) => until(() => c.events.connected || undefined)

describe('shared event stream', () => {
  it('opens lazily on the first subscription and closes when the last one leaves', async () => {
    const c = client({ events: fast })
    const before = fake.eventStreams.opened
    const session = fake.addSession()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fake.eventStreams.opened).toBe(before)
    expect(c.events.connected).toBe(false)
    const offA = c.events.onSession(session.id, () => undefined)
    const offB = c.events.onEvent(() => undefined)
    await connected(c)
    expect(fake.eventStreams.opened).toBe(before + 1)
    offA()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(c.events.connected).toBe(true)
    offB()
    expect(c.events.connected).toBe(false)
    await until(() => fake.eventStreams.open === 0)
  })

  it('hands raw subscribers each event with the size of its data as received', async () => {
    const c = client({ events: fast })
    const got: Array<{ type: string; size: number }> = []
    const off = c.events.onEvent((event, size) => {
      if (event.type.startsWith('test.')) got.push({ type: event.type, size })
    })
    await connected(c)
    const small = fake.emit('test.small', { sessionID: 'ses_x', delta: 'x' })
    const big = fake.emit('test.big', { sessionID: 'ses_x', delta: 'y'.repeat(100_000) })
    await until(() => got.length === 2 || undefined)
    // The fake sends each event as one JSON text: its length, whatever the SSE framing added.
    expect(got).toEqual([
      { type: 'test.small', size: JSON.stringify(small).length },
      { type: 'test.big', size: JSON.stringify(big).length },
    ])
    off()
  })

  it('shares one connection between many subscriptions', async () => {
    const c = client({ events: fast })
    const before = fake.eventStreams.opened
    const offs = Array.from({ length: 5 }, () => c.events.onSession(fake.addSession().id, () => undefined))
    await connected(c)
    expect(fake.eventStreams.opened).toBe(before + 1)
    for (const off of offs) off()
  })

  it('delivers typed events to the subscribers of their session only', async () => {
    const c = client({ events: fast })
    const a = fake.addSession()
    const b = fake.addSession()
    const ofA: SessionEvent[] = []
    const ofB: SessionEvent[] = []
    c.events.onSession(a.id, (event) => ofA.push(event))
    c.events.onSession(b.id, (event) => ofB.push(event))
    await connected(c)
    const messageID = fake.prompt(a.id, 'hi')
    const ask = fake.askPermission(a.id)
    fake.emit('permission.asked', { sessionID: a.id, broken: true })
    fake.emit('message.part.delta', { sessionID: a.id, delta: 'x' })
    await until(() => ofA.find((e) => e.type === 'permission.asked'))
    const asked = ofA.find((e) => e.type === 'permission.asked')
    expect(asked?.type === 'permission.asked' && asked.properties.id).toBe(ask.id)
    const user = ofA.find((e) => e.type === 'message.updated')
    expect(user?.type === 'message.updated' && user.properties.info.id).toBe(messageID)
    expect(ofA.map((e) => e.type)).toEqual(expect.arrayContaining(['session.status', 'message.part.updated']))
    expect(ofA.some((e) => (e.type as string) === 'message.part.delta')).toBe(false)
    expect(ofA.filter((e) => e.type === 'permission.asked')).toHaveLength(1)
    expect(ofB).toEqual([])
  })

  it('reconnects after the runtime ends the stream and resumes delivery', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    const seen: SessionEvent[] = []
    const changes: boolean[] = []
    c.events.onConnectionChange((value) => changes.push(value))
    c.events.onSession(session.id, (event) => seen.push(event))
    await connected(c)
    const opened = fake.eventStreams.opened
    fake.dropEventStreams()
    await until(() => changes.includes(false))
    await until(() => fake.eventStreams.opened > opened && c.events.connected)
    expect(changes).toEqual([true, false, true])
    fake.setTodos(session.id, [{ content: 'after reconnect', status: 'pending', priority: 'low' }])
    const todo = await until(() => seen.find((e) => e.type === 'todo.updated'))
    expect(todo.type === 'todo.updated' && todo.properties.todos[0]?.content).toBe('after reconnect')
  })

  it('reconnects when nothing, not even a heartbeat, arrives within the watchdog timeout', async () => {
    const c = client({ events: { ...fast, heartbeatTimeoutMs: 150 } })
    c.events.onEvent(() => undefined)
    await connected(c)
    const opened = fake.eventStreams.opened
    await until(() => fake.eventStreams.opened > opened, 3_000)
    expect(c.events.lastError?.code === 'ERR_UPSTREAM_TIMEOUT' || c.events.connected).toBe(true)
  })

  it('backs off exponentially with jitter up to the cap while the stream fails', async () => {
    const attempts: number[] = []
    server.use(
      http.get(fake.url('/event'), () => {
        attempts.push(Date.now())
        return new HttpResponse('down', { status: 503 })
      }),
    )
    const c = client({ events: { initialBackoffMs: 20, maxBackoffMs: 160, random: () => 0.5 } })
    c.events.onEvent(() => undefined)
    await until(() => attempts.length >= 7 || undefined, 5_000)
    const gaps = attempts.slice(1).map((t, i) => t - (attempts[i] ?? t))
    // Delays 15, 30, 60, 120, 120, 120 ms (three quarters of min(cap, 20·2^n)); timers are coarse.
    expect(gaps[0]).toBeLessThan(gaps[3] ?? 0)
    for (const gap of gaps.slice(4)) {
      expect(gap).toBeGreaterThanOrEqual(100)
      expect(gap).toBeLessThan(400)
    }
    expect(c.events.connected).toBe(false)
    expect(c.events.lastError).toMatchObject({
      code: 'ERR_UPSTREAM_HTTP',
      status: 503,
      operation: 'event.subscribe',
    })
  })

  it('reports a 401 on the stream without the credential', async () => {
    const c = client({ password: 'wrong-pw', events: fast })
    c.events.onEvent(() => undefined)
    const error = await until(() => c.events.lastError)
    expect(error).toMatchObject({ code: 'ERR_UPSTREAM_HTTP', status: 401, isRetryable: false })
    const dump = JSON.stringify({ ...error, message: error.message, body: error.body })
    expect(dump).not.toContain('wrong-pw')
    expect(dump).not.toContain(basicToken(fake.username, 'wrong-pw'))
  })

  it('keeps delivering to other subscribers when one throws', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const c = client({ events: fast })
    const session = fake.addSession()
    const seen: string[] = []
    c.events.onSession(session.id, () => {
      throw new Error('subscriber bug')
    })
    c.events.onSession(session.id, (event) => seen.push(event.type))
    await connected(c)
    fake.setTodos(session.id, [])
    await until(() => seen.includes('todo.updated') || undefined)
    expect(c.events.connected).toBe(true)
    expect(spy).toHaveBeenCalled()
    spy.mockRestore()
  })
})
