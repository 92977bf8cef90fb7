import { HttpResponse, http } from 'msw'
import { describe, expect, it } from 'vitest'
import type { UpstreamClient } from '../src/index.ts'
import { useFakeRuntime } from './support/msw.ts'

const { fake, server, client } = useFakeRuntime()
const fast = { initialBackoffMs: 10, maxBackoffMs: 50 }

async function connected(c: UpstreamClient): Promise<void> {
  c.events.onEvent(() => undefined)
  const deadline = Date.now() + 3_000
  while (!c.events.connected) {
    if (Date.now() > deadline) throw new Error('never connected')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A check that reports the completed assistant message of a turn, counting its runs. */
function turnDone(c: UpstreamClient, sessionId: string, messageID: string) {
  const check = async () => {
    check.runs++
    const { messages } = await c.listMessages(sessionId)
    return messages.find(
      (m) =>
        m.info.role === 'assistant' && m.info.parentID === messageID && m.info.time.completed !== undefined,
    )
  }
  check.runs = 0
  return check
}

describe('waitFor', () => {
  it('resolves with the first matching event of the session', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    await connected(c)
    const waiting = c.events.waitFor(session.id, (e) => e.type === 'session.idle', { timeoutMs: 2_000 })
    const messageID = fake.prompt(session.id, 'hi')
    fake.completeTurn(session.id, 'done')
    const event = await waiting
    expect(event).toMatchObject({ type: 'session.idle', properties: { sessionID: session.id } })
    expect(fake.runningTurn(session.id)).toBeUndefined()
    expect(messageID).toMatch(/^msg_/)
  })

  it('resolves undefined at the deadline', async () => {
    const c = client({ events: fast })
    const started = Date.now()
    expect(await c.events.waitFor(fake.addSession().id, () => true, { timeoutMs: 80 })).toBeUndefined()
    expect(Date.now() - started).toBeGreaterThanOrEqual(70)
  })

  it('rejects with the signal reason when aborted, and at once if already aborted', async () => {
    const c = client({ events: fast })
    const controller = new AbortController()
    const waiting = c.events.waitFor(fake.addSession().id, () => true, {
      timeoutMs: 5_000,
      signal: controller.signal,
    })
    controller.abort(new Error('client went away'))
    await expect(waiting).rejects.toThrow('client went away')
    await expect(
      c.events.waitFor('ses_x', () => true, {
        timeoutMs: 5_000,
        signal: AbortSignal.abort(new Error('early')),
      }),
    ).rejects.toThrow('early')
  })
})

describe('waitUntil', () => {
  it('runs the check at once and returns a state that is already there', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    const messageID = fake.prompt(session.id, 'hi')
    fake.completeTurn(session.id, 'done')
    const check = turnDone(c, session.id, messageID)
    const result = await c.events.waitUntil(session.id, check, { timeoutMs: 2_000 })
    expect(result?.info.parentID).toBe(messageID)
    expect(check.runs).toBe(1)
  })

  it('re-runs the check on events while the stream is up, without polling', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    await connected(c)
    const messageID = fake.prompt(session.id, 'hi')
    const check = turnDone(c, session.id, messageID)
    const waiting = c.events.waitUntil(session.id, check, { timeoutMs: 3_000, pollMs: 20 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Connected and no events: no polling happened in 300 ms despite pollMs 20.
    expect(check.runs).toBeLessThanOrEqual(2)
    fake.completeTurn(session.id, 'done')
    expect((await waiting)?.info.parentID).toBe(messageID)
  })

  it('falls back to polling every pollMs while the stream is down, and resolves', async () => {
    fake.setEventsAvailable(false)
    try {
      const c = client({ events: fast })
      const session = fake.addSession()
      const messageID = fake.prompt(session.id, 'hi')
      const check = turnDone(c, session.id, messageID)
      const waiting = c.events.waitUntil(session.id, check, { timeoutMs: 3_000, pollMs: 25 })
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(c.events.connected).toBe(false)
      expect(check.runs).toBeGreaterThanOrEqual(4)
      fake.completeTurn(session.id, 'done') // its events reach nobody: only a poll can see it
      expect((await waiting)?.info.parentID).toBe(messageID)
    } finally {
      fake.setEventsAvailable(true)
    }
  })

  it('resolves undefined at the deadline when the state never comes, also while polling', async () => {
    fake.setEventsAvailable(false)
    try {
      const c = client({ events: fast })
      const session = fake.addSession()
      const check = turnDone(c, session.id, fake.prompt(session.id, 'hi'))
      const started = Date.now()
      expect(await c.events.waitUntil(session.id, check, { timeoutMs: 150, pollMs: 20 })).toBeUndefined()
      expect(Date.now() - started).toBeLessThan(1_000)
      const runs = check.runs
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(check.runs).toBe(runs)
    } finally {
      fake.setEventsAvailable(true)
    }
  })

  it('checks again when the stream comes back, since events of the gap are lost', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    await connected(c)
    const messageID = fake.prompt(session.id, 'hi')
    const check = turnDone(c, session.id, messageID)
    let stall = true
    server.use(
      http.get(fake.url('/event'), () => (stall ? new HttpResponse('down', { status: 503 }) : undefined)),
    )
    const waiting = c.events.waitUntil(session.id, check, { timeoutMs: 3_000, pollMs: 10_000 })
    fake.dropEventStreams()
    while (c.events.connected) await new Promise((resolve) => setTimeout(resolve, 5))
    fake.completeTurn(session.id, 'done') // lost: the stream is down and pollMs is long
    const runs = check.runs
    stall = false
    expect((await waiting)?.info.parentID).toBe(messageID)
    expect(check.runs).toBe(runs + 1)
  })

  it('never overlaps checks and queues one more run for events during a check', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    await connected(c)
    let active = 0
    let maxActive = 0
    let runs = 0
    const check = async () => {
      runs++
      active++
      maxActive = Math.max(maxActive, active)
      await new Promise((resolve) => setTimeout(resolve, 50))
      active--
      return runs >= 2 ? runs : undefined
    }
    const waiting = c.events.waitUntil(session.id, check, { timeoutMs: 3_000 })
    // Five events while the first check runs: exactly one more run, not five.
    for (let i = 0; i < 5; i++) fake.setTodos(session.id, [])
    expect(await waiting).toBe(2)
    expect(maxActive).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(runs).toBe(2)
  })

  it('rejects when the check throws', async () => {
    const c = client({ events: fast })
    await expect(
      c.events.waitUntil(
        'ses_x',
        async () => {
          throw new Error('check failed')
        },
        { timeoutMs: 1_000 },
      ),
    ).rejects.toThrow('check failed')
  })

  it('settles pending waits with undefined on close()', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    const pendingUntil = c.events.waitUntil(session.id, async () => undefined, { timeoutMs: 10_000 })
    const pendingFor = c.events.waitFor(session.id, () => true, { timeoutMs: 10_000 })
    c.close()
    expect(await pendingUntil).toBeUndefined()
    expect(await pendingFor).toBeUndefined()
    expect(c.events.connected).toBe(false)
  })
})
