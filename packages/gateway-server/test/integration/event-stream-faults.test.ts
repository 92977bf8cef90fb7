import { HttpResponse, http } from 'msw'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, type McpSession, useHarness } from './harness.js'

// Issue 18 with the fake runtime: waiting job.get calls while the runtime's event stream is
// refused or stalled. They poll (one read per poll for all the waiters of a job), answer the
// job's end within a poll or a probe, never outlive waitMs, and go back to events afterwards.
// The same against the real runtime through a proxy: test/e2e/event-stream-faults.test.ts.

const h = useHarness()
const FAST = { initialBackoffMs: 10, maxBackoffMs: 50 }
let polling: McpSession

beforeAll(async () => {
  // Polls every 100–200 ms, probes after 300 ms of silence: the real defaults (1 s, 2 s) scaled down.
  const gateway = h.extraGateway({
    upstream: { events: { ...FAST, pollIntervalMs: 200, probeAfterMs: 300 } },
    gateway: { limits: { concurrentWaits: 100, concurrentRuns: 100 } },
  })
  polling = await h.connect('full', { gateway })
})

afterEach(() => h.fake.setEventsAvailable(true))

async function start(message: string): Promise<{ job: string; sid: string }> {
  const run = await polling.ok('gateway.agent.run', { message, waitMs: 0 })
  return { job: String(run.job), sid: await h.sessionId('full', String(run.session)) }
}

const messageReads = (mark: number, sid: string): number =>
  h.requestsSince(mark).filter((r) => r.method === 'GET' && r.path === `/session/${sid}/message`).length

describe('job waits while the event stream is refused', () => {
  it('20 waiters of one job, arriving one after the other, share one read per poll; all answer its end within a poll', async () => {
    // The default poll interval (1 s) here.
    const gateway = h.extraGateway({
      upstream: { events: FAST },
      gateway: { limits: { concurrentWaits: 100, concurrentRuns: 100 } },
    })
    const client = await h.connect('full', { gateway })
    const run = await client.ok('gateway.agent.run', { message: 'runs until told', waitMs: 0 })
    const sid = await h.sessionId('full', String(run.session))
    h.fake.setEventsAvailable(false)
    const mark = h.fake.requests.length
    const started = performance.now()
    const waits: Array<Promise<Record<string, unknown>>> = []
    for (let i = 0; i < 20; i++) {
      waits.push(client.ok('gateway.job.get', { job: run.job, waitMs: 20_000 }))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const endedAt = performance.now()
    h.fake.completeTurn(sid, 'ended during the outage')
    const answers = await Promise.all(waits)
    const answeredIn = performance.now() - endedAt
    for (const a of answers) expect(a).toMatchObject({ status: 'completed', text: 'ended during the outage' })
    expect(answeredIn).toBeLessThan(2_000)
    // Each waiter's first check reads (they came one by one); after that one read per poll (at
    // least 500 ms apart) for all of them, where a poll per waiter would be 20 reads per second.
    const reads = messageReads(mark, sid)
    const polls = (performance.now() - started) / 500
    expect(
      reads,
      `${reads} message reads in ${Math.round(performance.now() - started)} ms`,
    ).toBeLessThanOrEqual(20 + polls + 3)
    await client.close()
  })

  it('a wait whose job does not end answers running at its deadline', async () => {
    const { job } = await start('runs on and on')
    h.fake.setEventsAvailable(false)
    const started = performance.now()
    const status = await polling.ok('gateway.job.get', { job, waitMs: 600 })
    expect(status.status).toBe('running')
    expect(performance.now() - started).toBeLessThan(1_500)
  })
})

/** `/event` answers, says it is connected, then never sends another byte (a stalled proxy). */
function stallEvents(h: Harness): void {
  h.server.use(
    http.get(h.fake.url('/event'), () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(
            new TextEncoder().encode(
              `data: ${JSON.stringify({ type: 'server.connected', properties: {} })}\n\n`,
            ),
          )
        },
      })
      return new HttpResponse(body, { headers: { 'content-type': 'text/event-stream' } })
    }),
  )
}

describe('job waits while the event stream is stalled', () => {
  it('the status probe reports a job that ended unseen long before the watchdog (25 s) or waitMs', async () => {
    stallEvents(h)
    const stalled = h.extraGateway({
      upstream: { events: { ...FAST, probeAfterMs: 300 } },
      gateway: { limits: { concurrentWaits: 100 } },
    })
    const client = await h.connect('full', { gateway: stalled })
    const run = await client.ok('gateway.agent.run', { message: 'ends unseen', waitMs: 0 })
    const sid = await h.sessionId('full', String(run.session))
    const waiting = client.ok('gateway.job.get', { job: run.job, waitMs: 20_000 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const endedAt = performance.now()
    h.fake.completeTurn(sid, 'nobody heard')
    expect(await waiting).toMatchObject({ status: 'completed', text: 'nobody heard' })
    expect(performance.now() - endedAt).toBeLessThan(3_000)
    await client.close()
  })

  it('a question asked during a stall is reported once the stall is detected (staleAfterMs), by polling', async () => {
    stallEvents(h)
    const stalled = h.extraGateway({
      upstream: { events: { ...FAST, staleAfterMs: 400, pollIntervalMs: 200 } },
      gateway: { limits: { concurrentWaits: 100 } },
    })
    const client = await h.connect('full', { gateway: stalled })
    const run = await client.ok('gateway.agent.run', { message: 'will ask', waitMs: 0 })
    const sid = await h.sessionId('full', String(run.session))
    const waiting = client.ok('gateway.job.get', { job: run.job, waitMs: 20_000 })
    await new Promise((resolve) => setTimeout(resolve, 100))
    const askedAt = performance.now()
    h.fake.askQuestion(sid)
    const status = await waiting
    expect(status.status).toBe('input_required')
    expect(performance.now() - askedAt).toBeLessThan(3_000)
    await client.close()
  })
})
