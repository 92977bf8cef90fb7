import { createUpstreamClient } from '@sallyport/upstream-client'
import { createFakeRuntime } from '@sallyport/upstream-client/testing'
import { HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { HEALTH_TIMEOUT_MS, runtimeFromUpstream } from './upstream-adapter.js'

// The status views while the event stream is not live (issue 18): they read the runtime, and
// many views at once share those reads (every running job's watch looks at each poll).

const fake = createFakeRuntime()
const server = setupServer(...fake.handlers)
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => {
  server.resetHandlers()
  fake.setEventsAvailable(true)
})
afterAll(() => server.close())

const statusReads = (): number => fake.requests.filter((r) => r.path === '/session/status').length

describe('status views while the stream is not live', () => {
  it('share the runtime reads among concurrent callers, and still see what the runtime says', async () => {
    fake.setEventsAvailable(false)
    const client = createUpstreamClient({ ...fake.clientOptions, events: { initialBackoffMs: 10 } })
    const runtime = runtimeFromUpstream(client)
    try {
      const busy = fake.addSession()
      fake.prompt(busy.id, 'still running')
      const idle = fake.addSession()
      const before = statusReads()
      const seen = await Promise.all(
        Array.from({ length: 40 }, (_, i) => runtime.viewStatusOf(i % 2 === 0 ? busy.id : idle.id)),
      )
      expect(seen.filter((s) => s === 'busy')).toHaveLength(20)
      expect(seen.filter((s) => s === 'idle')).toHaveLength(20)
      // One read, and at most one more for the callers that came while it ran: not 40.
      expect(statusReads() - before).toBeLessThanOrEqual(2)
      const all = await runtime.viewStatuses()
      expect(all.get(busy.id)).toBe('busy')
      // A read that started after the change: the run has ended.
      fake.completeTurn(busy.id, 'done')
      expect(await runtime.viewStatusOf(busy.id)).toBe('idle')
    } finally {
      runtime.close?.()
      client.close()
    }
  })
})

describe('healthy', () => {
  it('answers false within its bound while the runtime hangs, after one try', async () => {
    let tries = 0
    server.use(
      http.get(fake.url('/global/health'), async () => {
        tries++
        await new Promise(() => {})
        return HttpResponse.json({ healthy: true })
      }),
    )
    const client = createUpstreamClient(fake.clientOptions)
    const runtime = runtimeFromUpstream(client)
    try {
      const started = performance.now()
      expect(await runtime.healthy()).toBe(false)
      const elapsed = performance.now() - started
      expect(elapsed).toBeGreaterThanOrEqual(HEALTH_TIMEOUT_MS - 50)
      expect(elapsed).toBeLessThan(HEALTH_TIMEOUT_MS + 1_500)
      expect(tries).toBe(1)
    } finally {
      runtime.close?.()
      client.close()
    }
  })

  it('answers true when the runtime says it is healthy', async () => {
    const client = createUpstreamClient(fake.clientOptions)
    const runtime = runtimeFromUpstream(client)
    try {
      expect(await runtime.healthy()).toBe(true)
    } finally {
      runtime.close?.()
      client.close()
    }
  })
})

describe("a job's messages (issue 10: a long session is not read whole at every look at its newest run)", () => {
  it('are read newest first, a page at a time, until the job’s user message is in hand', async () => {
    const client = createUpstreamClient(fake.clientOptions)
    const runtime = runtimeFromUpstream(client)
    try {
      const session = fake.addSession()
      const runs: string[] = []
      for (let i = 0; i < 60; i++) {
        runs.push(fake.prompt(session.id, `turn ${i}`))
        fake.completeTurn(session.id, `answer ${i}`)
      }
      const ids = (messages: ReadonlyArray<{ info: { id: string } }>): string[] =>
        messages.map((m) => m.info.id)
      const all = ids(await runtime.messages(session.id))
      expect(all).toHaveLength(120)
      const reads = (): Array<Readonly<Record<string, string>>> =>
        fake.requests.filter((r) => r.path === `/session/${session.id}/message`).map((r) => r.query)

      // The newest run: one short page, the newest messages in order.
      let before = reads().length
      const newest = ids(await runtime.messages(session.id, { from: runs[59] as string }))
      expect(newest).toContain(runs[59])
      expect(newest).toEqual(all.slice(-newest.length))
      expect(newest.length).toBeLessThanOrEqual(16)
      expect(reads().slice(before)).toHaveLength(1)

      // An older run: pages back until it is in hand; still a suffix of the whole, in order.
      before = reads().length
      const older = ids(await runtime.messages(session.id, { from: runs[20] as string }))
      expect(older).toContain(runs[20])
      expect(older).toEqual(all.slice(-older.length))
      expect(older.length).toBeLessThan(all.length)
      expect(
        reads()
          .slice(before)
          .every((q) => q.limit !== undefined),
      ).toBe(true)

      // A message that is not there: every message, as without `from`.
      expect(ids(await runtime.messages(session.id, { from: 'msg_000000000000NotThere0000' }))).toEqual(all)
    } finally {
      runtime.close?.()
      client.close()
    }
  })
})

describe('waits', () => {
  it("hand the upstream client's wait afterBurst only when asked (job waits; never a run's watch)", async () => {
    const client = createUpstreamClient(fake.clientOptions)
    const runtime = runtimeFromUpstream(client)
    const given: Array<Record<string, unknown>> = []
    client.events.waitUntil = (async (_id: string, _check: unknown, options: Record<string, unknown>) => {
      given.push(options)
      return undefined
    }) as unknown as typeof client.events.waitUntil
    try {
      await runtime.waitUntil('ses_x', async () => undefined, { timeoutMs: 5, afterBurst: true })
      await runtime.waitUntil('ses_x', async () => undefined, { timeoutMs: 5 })
      expect(given[0]).toMatchObject({ timeoutMs: 5, afterBurst: true })
      expect(given[1]).not.toHaveProperty('afterBurst')
      expect(typeof given[1]?.relevant).toBe('function')
    } finally {
      runtime.close?.()
      client.close()
    }
  })
})
