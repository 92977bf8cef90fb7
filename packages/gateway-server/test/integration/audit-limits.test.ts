import { http } from 'msw'
import { beforeAll, describe, expect, it } from 'vitest'
import { gatewayUpstreamOptions } from '../../src/fairness.js'
import {
  auditLinesSince,
  type CallOutcome,
  MARK,
  type McpSession,
  postRpc,
  rpcCall,
  useHarness,
  writeWorkspace,
} from './harness.js'

// The audit log, compared call by call with a mixed workload, and the per-credential limits.

const h = useHarness()

beforeAll(async () => {
  await writeWorkspace(h.creds.workspace)
})

type Line = Record<string, unknown>
const auditSince = (mark: number): Line[] => auditLinesSince(h, mark)
const view = (l: Line): Line =>
  JSON.parse(
    JSON.stringify({
      username: l.username,
      rpcMethod: l.rpcMethod,
      tool: l.tool,
      outcome: l.outcome,
      errorCode: l.errorCode,
    }),
  )

const post = postRpc
/** Polls until `find` returns a value (every 20 ms, at most 15 s). */
async function pollFor<T>(find: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error('pollFor: not found within 15 s')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
const call = rpcCall

/**
 * Starts a run in `session`, still running, until one is refused as `rate_limited`, and returns
 * that answer. The runtime's events reach the gateway on its own time; until a limit holds, each
 * try is refused as busy, which starts nothing.
 */
async function refusedRunIn(client: McpSession, session: string): Promise<CallOutcome> {
  let last: CallOutcome | undefined
  await expect
    .poll(
      async () => {
        last = await client.call('gateway.agent.run', { message: 'again', session, waitMs: 0 })
        return last.kind === 'result' && last.error?.code
      },
      { timeout: 10_000, interval: 100 },
    )
    .toBe('rate_limited')
  return last as CallOutcome
}

describe('the audit log', () => {
  it('has exactly one line per call of a mixed workload, each with its tool and true outcome', async () => {
    const started = await h.clients.full.ok('gateway.agent.run', { message: 'keep going', waitMs: 0 })
    const mark = h.logs.lines().length
    const t0 = performance.now()
    await h.clients.full.ok('gateway.catalog.get')
    await h.clients.full.ok('gateway.workspace.read', { path: 'README.md' })
    await h.clients.full.call('gateway.workspace.read', { path: '.env' })
    await h.clients.chat.call('gateway.workspace.read', { path: 'README.md' })
    await h.clients.chat.call('gateway.agent.run', { message: '' })
    await h.clients.full.call('x'.repeat(64))
    await h.clients.full.ok('gateway.job.get', { job: started.job, waitMs: 400 })
    await h.clients.full.ok('gateway.session.list')
    await h.clients.full.call('gateway.session.get', { session: 'v1.not-a-handle' })
    expect(performance.now() - t0).toBeGreaterThan(400)
    const lines = auditSince(mark)
    expect(lines.map(view)).toEqual([
      { username: 'owner', rpcMethod: 'tools/call', tool: 'gateway.catalog.get', outcome: 'ok' },
      { username: 'owner', rpcMethod: 'tools/call', tool: 'gateway.workspace.read', outcome: 'ok' },
      {
        username: 'owner',
        rpcMethod: 'tools/call',
        tool: 'gateway.workspace.read',
        outcome: 'error',
        errorCode: 'path_denied',
      },
      {
        username: 'discord',
        rpcMethod: 'tools/call',
        tool: 'gateway.workspace.read',
        outcome: 'refused',
        errorCode: 'unknown_tool',
      },
      {
        username: 'discord',
        rpcMethod: 'tools/call',
        tool: 'gateway.agent.run',
        outcome: 'refused',
        errorCode: 'invalid_input',
      },
      // A name the gateway does not have is recorded as `unknown`, never as sent.
      {
        username: 'owner',
        rpcMethod: 'tools/call',
        tool: 'unknown',
        outcome: 'refused',
        errorCode: 'unknown_tool',
      },
      { username: 'owner', rpcMethod: 'tools/call', tool: 'gateway.job.get', outcome: 'ok' },
      { username: 'owner', rpcMethod: 'tools/call', tool: 'gateway.session.list', outcome: 'ok' },
      {
        username: 'owner',
        rpcMethod: 'tools/call',
        tool: 'gateway.session.get',
        outcome: 'error',
        errorCode: 'not_found',
      },
    ])
    // The duration runs to the last byte: the 400 ms wait is in it.
    expect(lines[6]?.durationMs as number).toBeGreaterThanOrEqual(400)
    expect(JSON.stringify(lines)).not.toContain('x'.repeat(64))
  })

  it('writes one line per call of a JSON-RPC batch, with the batch size and the shared request id', async () => {
    const mark = h.logs.lines().length
    const res = await post(h.gateway, h.creds.keys.read, [
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      call(2, 'gateway.catalog.get'),
      call(3, 'gateway.session.delete', { session: 'v1.x' }),
      call(4, 'gateway.workspace.read', { path: '.env' }),
      call(5, 'gateway.workspace.read', { path: 'README.md' }),
      call(6, 'gateway.session.get', {}),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ])
    expect(res.status).toBe(200)
    const lines = auditSince(mark)
    expect(lines.map(view)).toEqual([
      { username: 'reader', rpcMethod: 'tools/list', outcome: 'ok' },
      { username: 'reader', rpcMethod: 'tools/call', tool: 'gateway.catalog.get', outcome: 'ok' },
      {
        username: 'reader',
        rpcMethod: 'tools/call',
        tool: 'gateway.session.delete',
        outcome: 'refused',
        errorCode: 'unknown_tool',
      },
      {
        username: 'reader',
        rpcMethod: 'tools/call',
        tool: 'gateway.workspace.read',
        outcome: 'error',
        errorCode: 'path_denied',
      },
      { username: 'reader', rpcMethod: 'tools/call', tool: 'gateway.workspace.read', outcome: 'ok' },
      {
        username: 'reader',
        rpcMethod: 'tools/call',
        tool: 'gateway.session.get',
        outcome: 'refused',
        errorCode: 'invalid_input',
      },
      { username: 'reader', rpcMethod: 'notifications/initialized', outcome: 'ok' },
    ])
    expect(new Set(lines.map((l) => l.requestId)).size).toBe(1)
    expect(new Set(lines.map((l) => l.batch))).toEqual(new Set([7]))
  })

  it('logs a tools/call sent as a notification (no id) as refused: nothing ran (review finding: logged ok)', async () => {
    const sessions = h.fake.state.sessions.size
    const mark = h.logs.lines().length
    const res = await post(h.gateway, h.creds.keys.chat, [
      {
        jsonrpc: '2.0',
        method: 'tools/call',
        params: { name: 'gateway.agent.run', arguments: { message: 'hi' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ])
    expect(res.status).toBeLessThan(400)
    expect(h.fake.state.sessions.size).toBe(sessions)
    expect(auditSince(mark).map(view)).toEqual([
      {
        username: 'discord',
        rpcMethod: 'tools/call',
        tool: 'gateway.agent.run',
        outcome: 'refused',
        errorCode: 'not_a_request',
      },
      { username: 'discord', rpcMethod: 'notifications/initialized', outcome: 'ok' },
    ])
  })

  it('records a wait whose client left as aborted, and the wait stops (review finding: logged ok after the full wait)', async () => {
    const run = await h.clients.chat.ok('gateway.agent.run', { message: 'long one', waitMs: 0 })
    const mark = h.logs.lines().length
    const controller = new AbortController()
    const response = await h.gateway.fetch(
      new Request('http://gateway.test/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          authorization: `Bearer ${h.creds.keys.chat}`,
        },
        body: JSON.stringify(call(7, 'gateway.job.get', { job: run.job, waitMs: 30_000 })),
        signal: controller.signal,
      }),
    )
    // The answer is on its way (headers sent, the wait running); the client leaves.
    const t0 = performance.now()
    controller.abort()
    await response.text().catch(() => undefined)
    const line = await pollFor(() => auditSince(mark).find((l) => l.tool === 'gateway.job.get'))
    expect(view(line), JSON.stringify(line)).toMatchObject({ tool: 'gateway.job.get', outcome: 'aborted' })
    // Logged when the wait stopped, long before its 30 s were up.
    expect(performance.now() - t0).toBeLessThan(15_000)
    expect(line.durationMs as number).toBeLessThan(15_000)
  })

  it('records a malformed resource URI as invalid input, not an internal error', async () => {
    const out = await h.clients.full.read('gateway://workspace/%E0%A4%A')
    expect(out.ok).toBe(false)
    const last = auditSince(0).at(-1)
    expect(last).toMatchObject({
      rpcMethod: 'resources/read',
      outcome: 'refused',
      errorCode: 'invalid_input',
    })
  })
})

/** A chat credential's run, on a gateway of its own whose run events refill at 1 a second. */
async function chatRunWithEventBurst(runEventBurst: number, message: string) {
  const g = h.extraGateway({
    gateway: { limits: { runEventsPerSecond: 1, runEventBurst, runsPerMinute: 1_000_000, runBurst: 10_000 } },
  })
  const client = await h.connect('chat', { gateway: g })
  const run = (await client.ok('gateway.agent.run', { message, waitMs: 0 })) as { session: string }
  return { client, run, id: await h.sessionId('chat', run.session) }
}

/** Clients of two chat credentials on a gateway of their own whose run events refill at 1 a second from a burst of 100 (other run limits out of the way). */
async function twoChatsWithEventBurst100() {
  const g = h.extraGateway({
    gateway: {
      limits: {
        runEventsPerSecond: 1,
        runEventBurst: 100,
        concurrentRuns: 10,
        runsPerMinute: 1_000_000,
        runBurst: 10_000,
      },
    },
  })
  return { client: await h.connect('chat', { gateway: g }), other: await h.connect('chat2', { gateway: g }) }
}

/** Emits `count` small streamed chunks of a run in `sessionID`, as the runtime sends them. */
function streamChunks(sessionID: string, count: number): void {
  for (let i = 0; i < count; i++)
    h.fake.emit('message.part.delta', {
      sessionID,
      messageID: 'msg_x',
      partID: 'prt_x',
      field: 'text',
      delta: 'w ',
    })
}

describe('per-credential limits', () => {
  it('refuses a batch over maxBatch as a whole, one refused line per call, and runs none of it', async () => {
    const g = h.extraGateway({ gateway: { limits: { maxBatch: 3 } } })
    const sessions = h.fake.state.sessions.size
    const mark = h.logs.lines().length
    const res = await post(
      g,
      h.creds.keys.chat,
      [1, 2, 3, 4].map((id) => call(id, 'gateway.agent.run', { message: `hi ${MARK.complete}` })),
    )
    expect(res.status).toBe(400)
    expect(res.text).toContain('Batch too large: at most 3')
    expect(h.fake.state.sessions.size).toBe(sessions)
    expect(auditSince(mark).map((l) => [l.outcome, l.errorCode])).toEqual(
      Array.from({ length: 4 }, () => ['refused', 'batch_too_large']),
    )
  })

  it('answers 429 with a retry hint beyond the rate, per credential (another credential is unaffected)', async () => {
    const g = h.extraGateway({ gateway: { limits: { ratePerSecond: 0.5, rateBurst: 3 } } })
    const catalog = (id: number) => call(id, 'gateway.catalog.get')
    for (let i = 0; i < 3; i++) expect((await post(g, h.creds.keys.chat, catalog(i))).status).toBe(200)
    const t0 = performance.now()
    const limited = await post(g, h.creds.keys.chat, catalog(7))
    expect(limited.status).toBe(429)
    // Held back a second, so a client that retries at once cannot flood with refusals.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900)
    const body = JSON.parse(limited.text) as {
      id: unknown
      error: { message: string; data: { code: string; retryAfterMs: number } }
    }
    // Answered with the request's own id.
    expect(body.id).toBe(7)
    expect(body.error.data.code).toBe('rate_limited')
    expect(body.error.data.retryAfterMs).toBeGreaterThan(0)
    expect(body.error.data.retryAfterMs).toBeLessThanOrEqual(2000)
    expect((await post(g, h.creds.keys.chat2, catalog(1))).status).toBe(200)
    // A batch counts each of its calls, and is answered with one error per call.
    const batch = await post(g, h.creds.keys.chat2, [catalog(1), catalog(2), catalog(3)])
    expect(batch.status).toBe(429)
    expect((JSON.parse(batch.text) as Array<{ id: number }>).map((a) => a.id)).toEqual([1, 2, 3])
  })

  it('counts protocol traffic too: lists, pings and notifications, and a request without a body', async () => {
    // Refills one operation in 100 s: the refusals' held second gives nothing back.
    const g = h.extraGateway({ gateway: { limits: { ratePerSecond: 0.01, rateBurst: 4 } } })
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' }
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' }
    expect((await post(g, h.creds.keys.chat, list)).status).toBe(200)
    expect((await post(g, h.creds.keys.chat, ping)).status).toBe(200)
    expect((await post(g, h.creds.keys.chat, initialized)).status).toBe(202)
    const bodiless = await g.fetch(
      new Request('http://gateway.test/mcp', {
        method: 'DELETE',
        headers: { authorization: `Bearer ${h.creds.keys.chat}`, 'mcp-protocol-version': '2025-06-18' },
      }),
    )
    await bodiless.body?.cancel()
    expect(bodiless.status).not.toBe(429)
    // The burst of 4 is spent: the next ping is refused with a retry hint, a list too, and a
    // request without a body.
    const refused = await post(g, h.creds.keys.chat, ping)
    expect(refused.status).toBe(429)
    expect((JSON.parse(refused.text) as { error: { data: { code: string } } }).error.data.code).toBe(
      'rate_limited',
    )
    expect((await post(g, h.creds.keys.chat, list)).status).toBe(429)
    const again = await g.fetch(
      new Request('http://gateway.test/mcp', {
        method: 'DELETE',
        headers: { authorization: `Bearer ${h.creds.keys.chat}`, 'mcp-protocol-version': '2025-06-18' },
      }),
    )
    expect(again.status).toBe(429)
    // Another credential is unaffected.
    expect((await post(g, h.creds.keys.chat2, ping)).status).toBe(200)
  })

  it('counts a large body as one operation per 256 KiB, and bodies refused before parsing as one each', async () => {
    const g = h.extraGateway({ gateway: { limits: { ratePerSecond: 0.5, rateBurst: 12 } } })
    // About 1 MiB: 4 operations for its size, 1 for the call (12 → 7 → 2, then refused).
    const big = call(1, 'gateway.catalog.get', { note: 'x'.repeat(1024 * 1024) })
    expect((await post(g, h.creds.keys.chat, big)).status).toBe(200)
    expect((await post(g, h.creds.keys.chat, big)).status).toBe(200)
    const refused = await post(g, h.creds.keys.chat, big)
    expect(refused.status).toBe(429)
    expect(refused.text).toContain('too many large requests')
    // Another credential: twelve bodies too complex to parse use up its burst too.
    let nested: unknown = 0
    for (let i = 0; i < 40; i++) nested = [nested]
    const deep = call(1, 'gateway.catalog.get', { a: nested })
    for (let i = 0; i < 12; i++) expect((await post(g, h.creds.keys.chat2, deep)).status).toBe(400)
    expect((await post(g, h.creds.keys.chat2, call(2, 'gateway.catalog.get'))).status).toBe(429)
  })

  it('refuses a call with more fields than any tool takes before validating them one by one', async () => {
    const fields = Object.fromEntries(Array.from({ length: 9_000 }, (_, i) => [`${'k'.repeat(40)}${i}`, 1]))
    const res = await post(h.gateway, h.creds.keys.chat, call(1, 'gateway.session.list', fields))
    expect(res.status).toBe(200)
    expect(res.text).toContain('more than 64 fields')
    expect(res.text.length).toBeLessThan(1000)
  })

  it('holds at most concurrentWaits waiting calls per credential; the next gets rate_limited at once', async () => {
    const g = h.extraGateway({ gateway: { limits: { concurrentWaits: 2 } } })
    const client = await h.connect('chat', { gateway: g })
    const run = await client.ok('gateway.agent.run', { message: 'long one', waitMs: 0 })
    // Three waits at once with room for two: exactly one is refused, at once; two wait.
    const t0 = performance.now()
    const settled: number[] = []
    const calls = [0, 1, 2].map((i) =>
      client.call('gateway.job.get', { job: run.job, waitMs: 2000 }).then((out) => {
        settled[i] = performance.now() - t0
        return out
      }),
    )
    const refused = await Promise.race(
      calls.map((c, i) =>
        c.then((out) => (out.kind === 'result' && out.isError ? { out, i } : new Promise<never>(() => {}))),
      ),
    )
    expect(refused.out).toMatchObject({ kind: 'result', isError: true, error: { code: 'rate_limited' } })
    expect(refused.out.kind === 'result' && JSON.parse(refused.out.text).error.retryAfterMs).toBeGreaterThan(
      0,
    )
    // While the other two still wait, the same call without waitMs is served.
    expect((await client.ok('gateway.job.get', { job: run.job })).status).toBe('running')
    const outs = await Promise.all(calls)
    expect(outs.filter((o) => o.kind === 'result' && !o.isError)).toHaveLength(2)
    expect(settled[refused.i]).toBeLessThan(Math.min(...settled.filter((_, i) => i !== refused.i)))
    // Slots are released: a wait is accepted again.
    expect((await client.ok('gateway.job.get', { job: run.job, waitMs: 10 })).status).toBe('running')
    await client.close()
  })

  it('holds at most concurrentRuns agent.run calls per credential', async () => {
    const g = h.extraGateway({ gateway: { limits: { concurrentRuns: 1 } } })
    const client = await h.connect('full', { gateway: g })
    const sessions = h.fake.state.sessions.size
    const outs = await Promise.all(
      [0, 1].map((i) => client.call('gateway.agent.run', { message: `run ${i}`, waitMs: 1000 })),
    )
    const codes = outs.map((o) => (o.kind === 'result' && o.isError ? o.error?.code : 'ok')).sort()
    expect(codes).toEqual(['ok', 'rate_limited'])
    // The refused call created nothing.
    expect(h.fake.state.sessions.size).toBe(sessions + 1)
    await client.close()
  })

  it('starts at most runBurst runs at once and runsPerMinute after, per credential', async () => {
    const g = h.extraGateway({ gateway: { limits: { runsPerMinute: 1, runBurst: 2, concurrentRuns: 10 } } })
    const client = await h.connect('chat', { gateway: g })
    const sessions = h.fake.state.sessions.size
    for (const i of [0, 1])
      expect((await client.ok('gateway.agent.run', { message: `run ${i}`, waitMs: 0 })).status).toBe(
        'running',
      )
    // The burst is spent: a third run is refused with a hint, and creates nothing.
    const third = await client.call('gateway.agent.run', { message: 'one too many', waitMs: 0 })
    expect(third).toMatchObject({ kind: 'result', isError: true, error: { code: 'rate_limited' } })
    expect(third.kind === 'result' && third.error?.message).toMatch(/at most 1 a minute, 2 at once/)
    expect(third.kind === 'result' && JSON.parse(third.text).error.retryAfterMs).toBeGreaterThan(50_000)
    expect(h.fake.state.sessions.size).toBe(sessions + 2)
    // Reads are not run starts.
    expect((await client.call('gateway.catalog.get', {})).kind).toBe('result')
    // Another credential has its own run starts.
    const other = await h.connect('chat2', { gateway: g })
    expect((await other.ok('gateway.agent.run', { message: 'other', waitMs: 0 })).status).toBe('running')
    await Promise.all([client.close(), other.close()])
  })

  it('counts what a call reads from the runtime against its rate, by size (readBytesPerOperation)', async () => {
    // No refill during the test: only the burst of 40 operations.
    const g = h.extraGateway({
      upstream: gatewayUpstreamOptions,
      gateway: { limits: { ratePerSecond: 0.01, rateBurst: 40, readBytesPerOperation: 64 * 1024 } },
    })
    const sessionOf = async (who: 'chat' | 'chat2' | 'read', answer: string) => {
      const client = await h.connect(who, { gateway: g })
      const run = (await client.ok('gateway.agent.run', { message: 'read me', waitMs: 0 })) as {
        session: string
      }
      h.fake.completeTurn(await h.sessionId(who, run.session), answer)
      return { client, session: run.session }
    }
    type Reader = Awaited<ReturnType<typeof sessionOf>>
    const toolRead = ({ client, session }: Reader) =>
      client.call('gateway.session.get', { session, include: ['messages'] }).then((out) => {
        if (out.kind === 'result' && out.isError) throw new Error(String(out.error?.code))
      })
    const resourceRead = ({ client, session }: Reader) =>
      client.read(`gateway://sessions/${session}/messages`).then((out) => {
        if (!out.ok) throw new Error(JSON.stringify(out.error))
      })
    /** Reads until refused (a tool error or HTTP 429, both rate_limited); how many were answered. */
    const readsUntilRefused = async (reader: Reader, read: (r: Reader) => Promise<void>) => {
      for (let n = 0; n < 60; n++) {
        const refused = await read(reader).then(
          () => false,
          (error: Error) => {
            expect(error.message).toMatch(/rate_limited/)
            return true
          },
        )
        if (refused) return n
      }
      return 60
    }
    // A 1 MiB answer: each read of it costs 1 + about 16 operations, by tool or by resource.
    const big = await sessionOf('chat', 'y'.repeat(1024 * 1024))
    expect(await readsUntilRefused(big, toolRead)).toBeOneOf([2, 3])
    const bigToo = await sessionOf('read', 'z'.repeat(1024 * 1024))
    expect(await readsUntilRefused(bigToo, resourceRead)).toBeOneOf([2, 3])
    // Another credential reading a small session on the same gateway: about one operation each.
    const small = await sessionOf('chat2', 'short answer')
    expect(await readsUntilRefused(small, toolRead)).toBeGreaterThanOrEqual(35)
    await Promise.all([big.client.close(), bigToo.client.close(), small.client.close()])
  })

  it('holds at most concurrentCalls calls in progress per credential, tools and resources alike; waits are not counted', async () => {
    const g = h.extraGateway({ gateway: { limits: { concurrentCalls: 2 } } })
    const client = await h.connect('chat', { gateway: g })
    const run = (await client.ok('gateway.agent.run', { message: 'calls at once', waitMs: 0 })) as {
      session: string
      job: string
    }
    // Reads of the todo list wait here until the test lets them go.
    let open = (): void => undefined
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    let held = 0
    h.server.use(
      http.get('*/session/:id/todo', async () => {
        held++
        await gate
      }),
    )
    try {
      const slow = [0, 1].map(() =>
        client.call('gateway.session.get', { session: run.session, include: ['todos'] }),
      )
      await expect.poll(() => held, { timeout: 10_000 }).toBe(2)
      // Both slots are taken: a third call is refused at once, by tool or by resource, and says why.
      const third = await client.call('gateway.session.get', { session: run.session })
      expect(third).toMatchObject({ kind: 'result', isError: true, error: { code: 'rate_limited' } })
      expect(third.kind === 'result' && third.error?.message).toMatch(/calls in progress .*at most 2 at once/)
      expect(third.kind === 'result' && JSON.parse(third.text).error.retryAfterMs).toBeGreaterThan(0)
      const read = await client.read(`gateway://sessions/${run.session}/todos`)
      expect(read.ok).toBe(false)
      expect(read.error?.data).toMatchObject({ code: 'rate_limited' })
      expect(held).toBe(2)
      // A wait has its own limit; another credential its own calls.
      expect((await client.ok('gateway.job.get', { job: run.job, waitMs: 10 })).status).toBe('running')
      const other = await h.connect('chat2', { gateway: g })
      expect((await other.call('gateway.catalog.get', {})).kind).toBe('result')
      await other.close()
      open()
      for (const out of await Promise.all(slow)) expect(out.kind === 'result' && !out.isError).toBe(true)
      // The slots came back.
      expect((await client.read(`gateway://sessions/${run.session}/todos`)).ok).toBe(true)
    } finally {
      open()
      h.server.resetHandlers()
      await client.close()
    }
  })

  it("counts the runtime events of a credential's runs, its subagents' sessions included (runEventsPerSecond): beyond the allowance its next run is refused, no one else's", async () => {
    const { client, other } = await twoChatsWithEventBurst100()
    const run = (await client.ok('gateway.agent.run', { message: 'streams a lot', waitMs: 0 })) as {
      session: string
      job: string
    }
    // The other credential's run goes on meanwhile: none of these events are its.
    const otherRun = (await other.ok('gateway.agent.run', { message: 'quiet one', waitMs: 0 })) as {
      session: string
    }
    const id = await h.sessionId('chat', run.session)
    streamChunks('ses_nobodys', 200)
    streamChunks(id, 10)
    // A subagent's session: created under the run's, its events count as the run's (the run's
    // own events stay under the burst of 100 without them).
    h.fake.emit('session.created', { sessionID: 'ses_subagent', info: { id: 'ses_subagent', parentID: id } })
    streamChunks('ses_subagent', 100)
    // The events reach the gateway on its own time. Until they do, another run in the (still
    // running) session is refused as busy, which starts nothing; then as beyond the allowance.
    const next = await refusedRunIn(client, run.session)
    expect(next.kind === 'result' && next.error?.message).toMatch(/runtime events a second/)
    expect(next.kind === 'result' && JSON.parse(next.text).error.retryAfterMs).toBeGreaterThan(5_000)
    h.fake.completeTurn(id, 'done')
    // Reads are not held back, and the other credential (its run in progress) starts another.
    expect((await client.call('gateway.catalog.get', {})).kind).toBe('result')
    expect((await other.ok('gateway.agent.run', { message: 'still fine', waitMs: 0 })).status).toBe('running')
    h.fake.completeTurn(await h.sessionId('chat2', otherRun.session), 'done')
    await Promise.all([client.close(), other.close()])
  })

  it("stops a credential's runs once they are a whole burst beyond their allowance (cancelled, saying why), no one else's", async () => {
    const { client, other } = await twoChatsWithEventBurst100()
    const first = (await client.ok('gateway.agent.run', { message: 'floods', waitMs: 0 })) as {
      job: string
      session: string
    }
    const second = (await client.ok('gateway.agent.run', { message: 'floods too', waitMs: 0 })) as {
      job: string
      session: string
    }
    const quiet = (await other.ok('gateway.agent.run', { message: 'quiet one', waitMs: 0 })) as {
      job: string
      session: string
    }
    const [a, b, c] = await Promise.all([
      h.sessionId('chat', first.session),
      h.sessionId('chat', second.session),
      h.sessionId('chat2', quiet.session),
    ])
    const mark = h.logs.lines().length
    const status = async (who: typeof client, job: string) =>
      (await who.ok('gateway.job.get', { job })) as {
        status: string
        error?: { name: string; message: string }
      }
    // Another credential's run streams too: its own bucket, in debt but not at its floor.
    streamChunks(c, 90)
    // At least 300 events (each counts 1 and a bit for its size) against a burst of 100: past the
    // floor (a whole burst in debt), the run that streams is stopped; the other one (no event
    // yet) goes on until its next event.
    streamChunks(a, 300)
    await expect
      .poll(async () => (await status(client, first.job)).status, { timeout: 10_000 })
      .toBe('cancelled')
    expect((await status(client, second.job)).status).toBe('running')
    streamChunks(b, 1)
    await expect
      .poll(async () => (await status(client, second.job)).status, { timeout: 10_000 })
      .toBe('cancelled')
    const stopped = await status(client, first.job)
    expect(stopped.error?.name).toBe('RateLimited')
    expect(stopped.error?.message).toMatch(/runEventsPerSecond/)
    expect((await status(other, quiet.job)).status).toBe('running')
    // Said in the log once per stopped run, naming the credential, no session or job.
    const stops = () =>
      h.logs
        .lines()
        .slice(mark)
        .filter((l) => l.event === 'run_stopped')
    await expect.poll(() => stops().length, { timeout: 10_000 }).toBe(2)
    const lines = stops()
    expect(lines[0]?.username).toEqual(expect.any(String))
    for (const line of lines) {
      expect(line).toMatchObject({ reason: 'run_events', username: lines[0]?.username, outcome: 'cancelled' })
      expect(JSON.stringify(line)).not.toMatch(/ses_|msg_|v1\./)
    }
    h.fake.completeTurn(c, 'done')
    await Promise.all([client.close(), other.close()])
  })

  it('does not claim to have stopped a run whose events came in as it ended: it reads completed, the log says so', async () => {
    const { client, other } = await twoChatsWithEventBurst100()
    const run = (await client.ok('gateway.agent.run', { message: 'answers whole', waitMs: 0 })) as {
      job: string
      session: string
    }
    const id = await h.sessionId('chat', run.session)
    const mark = h.logs.lines().length
    // An answer that arrived whole: its events reach the gateway with the run's end.
    streamChunks(id, 300)
    h.fake.completeTurn(id, 'done')
    await expect
      .poll(
        () =>
          h.logs
            .lines()
            .slice(mark)
            .find((l) => l.event === 'run_stopped'),
        { timeout: 10_000 },
      )
      .toMatchObject({ outcome: 'finished', msg: expect.stringMatching(/^run not stopped/) })
    const job = (await client.ok('gateway.job.get', { job: run.job })) as { status: string; error?: unknown }
    expect(job.status).toBe('completed')
    expect(job.error).toBeUndefined()
    await Promise.all([client.close(), other.close()])
  })

  it("weighs a run's runtime events by their size: a few updates of a big part count as many events", async () => {
    const { client, run, id } = await chatRunWithEventBurst(300, 'one big part')
    // Two updates of a 60 KB text part (the session named only inside the part, as the runtime
    // sends them): about 470 events' worth, against a burst of 300 (not a whole burst in debt,
    // so the run goes on).
    for (const n of [1, 2])
      h.fake.emit('message.part.updated', {
        part: {
          id: `prt_big${n}`,
          sessionID: id,
          messageID: 'msg_x',
          type: 'text',
          text: 'x'.repeat(60_000),
        },
      })
    await refusedRunIn(client, run.session)
    h.fake.completeTurn(id, 'done')
    await client.close()
  })

  it("counts the steps of a credential's runs as more than their events: each is a request to the model", async () => {
    const { client, run, id } = await chatRunWithEventBurst(150, 'two steps')
    // Two small step starts: a dozen events' bytes, two steps' worth (200) against a burst of 150.
    for (const n of [1, 2])
      h.fake.emit('message.part.updated', {
        part: { id: `prt_step${n}`, sessionID: id, messageID: `msg_step${n}`, type: 'step-start' },
      })
    await refusedRunIn(client, run.session)
    h.fake.completeTurn(id, 'done')
    await client.close()
  })

  it('refuses a batch with two requests of the same id, whole, before anything runs', async () => {
    const mark = h.logs.lines().length
    const res = await postRpc(h.gateway, h.creds.keys.full, [
      rpcCall(7, 'gateway.catalog.get'),
      rpcCall(7, 'gateway.agent.run', { message: 'must not run', waitMs: 0 }),
    ])
    expect(res.status).toBe(400)
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: -32600, message: /same id/ } })
    const lines = auditSince(mark)
    expect(lines.map(view)).toEqual([
      {
        username: 'owner',
        rpcMethod: 'tools/call',
        tool: 'gateway.catalog.get',
        outcome: 'refused',
        errorCode: 'duplicate_id',
      },
      {
        username: 'owner',
        rpcMethod: 'tools/call',
        tool: 'gateway.agent.run',
        outcome: 'refused',
        errorCode: 'duplicate_id',
      },
    ])
    expect(h.turns.some((t) => JSON.stringify(t).includes('must not run'))).toBe(false)
    // Distinct ids (and the same id as a string and a number) are served.
    const ok = await postRpc(h.gateway, h.creds.keys.full, [
      rpcCall(7, 'gateway.catalog.get'),
      { ...rpcCall(8, 'gateway.catalog.get'), id: '7' },
    ])
    expect(ok.status).toBe(200)
  })

  it('logs a message with "id": null (no valid request) as refused, under no tool', async () => {
    const mark = h.logs.lines().length
    const res = await postRpc(h.gateway, h.creds.keys.full, {
      ...rpcCall(1, 'gateway.catalog.get'),
      id: null,
    })
    expect(res.status).toBe(400)
    const lines = auditSince(mark)
    expect(lines.map(view)).toEqual([
      { username: 'owner', rpcMethod: 'tools/call', outcome: 'refused', errorCode: 'invalid_request' },
    ])
  })

  it('counts runs, not calls: a run started with waitMs 0 keeps its slot until the runtime shows it over', async () => {
    const g = h.extraGateway({ gateway: { limits: { concurrentRuns: 2 } } })
    const client = await h.connect('chat', { gateway: g })
    const before = new Set(h.fake.state.sessions.keys())
    for (const i of [0, 1])
      expect((await client.ok('gateway.agent.run', { message: `keeps going ${i}`, waitMs: 0 })).status).toBe(
        'running',
      )
    // Both calls returned, both runs go on: a third run is refused, and says why.
    const third = await client.call('gateway.agent.run', { message: 'one too many', waitMs: 0 })
    expect(third).toMatchObject({ kind: 'result', isError: true, error: { code: 'rate_limited' } })
    expect(third.kind === 'result' && third.error?.message).toMatch(/runs in progress .*at most 2 at once/)
    const mine = [...h.fake.state.sessions.keys()].filter((id) => !before.has(id) && h.fake.runningTurn(id))
    // Another credential is not affected.
    const other = await h.connect('chat2', { gateway: g })
    const theirs = (await other.ok('gateway.agent.run', { message: 'other credential', waitMs: 0 })) as {
      status: string
      session: string
    }
    expect(theirs.status).toBe('running')
    // One of the two runs ends: its slot comes back once the other credential's run has ended too
    // and a few seconds have passed (until then each has a share of one; see RUN_SHARE_LINGER_MS).
    h.fake.completeTurn(mine[0] as string, 'done')
    await expect
      .poll(
        async () => {
          const out = await client.call('gateway.agent.run', { message: 'my share', waitMs: 0 })
          return out.kind === 'result' && out.error?.message
        },
        { timeout: 10_000, interval: 200 },
      )
      .toMatch(/while other credentials run too \(its share: 1 at once of 2\)/)
    h.fake.completeTurn(await h.sessionId('chat2', theirs.session), 'done')
    await expect
      .poll(
        async () => {
          const out = await client.call('gateway.agent.run', { message: 'room again', waitMs: 0 })
          return out.kind === 'result' && !out.isError
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBe(true)
    await client.close()
    await other.close()
  })
})
