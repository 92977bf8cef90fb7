import { describe, expect, it } from 'vitest'
import { createEventStream } from '../src/event-stream.ts'
import { createRedactor } from '../src/redact.ts'
import { useFakeRuntime } from './support/msw.ts'

// A stalled stream (issue 18): the TCP connection stays open and nothing arrives, as behind a
// proxy that stopped forwarding. It must stop counting as live after `staleAfterMs` (waits then
// poll), become live again with its next event, and still be replaced by the watchdog.

async function until<T>(check: () => T | undefined | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A `/event` the test writes to: every connection is a body the test controls. */
function controlledEvents() {
  const bodies: Array<ReadableStreamDefaultController<Uint8Array>> = []
  const encoder = new TextEncoder()
  return {
    bodies,
    send: async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            bodies.push(controller)
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      ),
    push(type: string, properties: Record<string, unknown> = {}) {
      bodies.at(-1)?.enqueue(encoder.encode(`data: ${JSON.stringify({ type, properties })}\n\n`))
    },
  }
}

describe('a stalled event stream', () => {
  it('stops being live after staleAfterMs of silence, is live again at its next event, and is replaced by the watchdog', async () => {
    const events = controlledEvents()
    const stream = createEventStream({
      baseUrl: 'http://127.0.0.1:9',
      send: events.send,
      redact: createRedactor('opencode', 'pw', 'dG9rZW4='),
      connectTimeoutMs: 5_000,
      tuning: {
        heartbeatTimeoutMs: 1_500,
        staleAfterMs: 150,
        pollIntervalMs: 1_000,
        probeAfterMs: 2_000,
        initialBackoffMs: 10,
        maxBackoffMs: 10,
        random: () => 0,
      },
    })
    const changes: boolean[] = []
    stream.onConnectionChange((live) => changes.push(live))
    const delivered: string[] = []
    stream.subscribe((event) => delivered.push(event.type))
    await until(() => events.bodies.length === 1)
    const silentFrom = Date.now()
    events.push('server.connected')
    await until(() => stream.connected)
    await until(() => !stream.connected)
    expect(Date.now() - silentFrom).toBeGreaterThanOrEqual(100)
    expect(changes).toEqual([true, false])
    expect(stream.lastError).toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT', operation: 'event.subscribe' })
    expect(stream.lastError?.message).toContain('stalled')
    // The same connection speaks again: live again, no reconnect.
    events.push('server.heartbeat')
    await until(() => stream.connected)
    expect(changes).toEqual([true, false, true])
    expect(stream.lastError).toBeUndefined()
    expect(events.bodies).toHaveLength(1)
    expect(delivered).toEqual(['server.connected', 'server.heartbeat'])
    // Silent again past the watchdog: the connection is replaced.
    await until(() => events.bodies.length === 2, 5_000)
    expect(changes).toEqual([true, false, true, false])
    events.push('server.connected')
    await until(() => stream.connected)
    stream.close()
  })

  it('stays live while heartbeats arrive within staleAfterMs', async () => {
    const events = controlledEvents()
    const stream = createEventStream({
      baseUrl: 'http://127.0.0.1:9',
      send: events.send,
      redact: createRedactor('opencode', 'pw', 'dG9rZW4='),
      connectTimeoutMs: 5_000,
      tuning: {
        heartbeatTimeoutMs: 5_000,
        staleAfterMs: 1_000,
        pollIntervalMs: 1_000,
        probeAfterMs: 2_000,
        initialBackoffMs: 10,
        maxBackoffMs: 10,
        random: () => 0,
      },
    })
    const changes: boolean[] = []
    stream.onConnectionChange((live) => changes.push(live))
    stream.subscribe(() => undefined)
    await until(() => events.bodies.length === 1)
    events.push('server.connected')
    await until(() => stream.connected)
    for (let i = 0; i < 10; i++) {
      await new Promise((resolve) => setTimeout(resolve, 60))
      events.push('server.heartbeat')
    }
    expect(changes).toEqual([true])
    stream.close()
  })
})

const { fake, client } = useFakeRuntime()

describe('waits over a stalled stream (fake runtime)', () => {
  it('poll once the stream is stale, and are event-driven again after its next event', async () => {
    // The fake's heartbeat is 10 s apart: 600 ms of silence counts as a stall here.
    const c = client({ events: { staleAfterMs: 600, initialBackoffMs: 10, maxBackoffMs: 50 } })
    const session = fake.addSession()
    c.events.onEvent(() => undefined)
    await until(() => c.events.connected)
    const messageID = fake.prompt(session.id, 'hi')
    let runs = 0
    const waiting = c.events.waitUntil(
      session.id,
      async () => {
        runs++
        const { messages } = await c.listMessages(session.id)
        return messages.find((m) => m.info.role === 'assistant' && m.info.parentID === messageID)
      },
      { timeoutMs: 10_000, pollMs: 50 },
    )
    await until(() => !c.events.connected)
    const stalledAt = runs
    await until(() => runs >= stalledAt + 3)
    // An event arrives on the same connection: live again, one more check, then no polling.
    fake.setTodos(session.id, [])
    await until(() => c.events.connected)
    const liveAt = runs
    await new Promise((resolve) => setTimeout(resolve, 250))
    // (At a 50 ms poll, 250 ms of polling would have been about five runs.)
    expect(runs - liveAt).toBeLessThanOrEqual(2)
    expect(fake.eventStreams.opened).toBe(1)
    fake.completeTurn(session.id, 'done')
    expect((await waiting)?.info.parentID).toBe(messageID)
  })
})
