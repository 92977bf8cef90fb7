import { writeFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../src/http/listen.js'
import type { Gateway } from '../../src/index.js'
import { auditLinesSince, pollUntil, rpcCall, useHarness } from './harness.js'

// The audit log over real sockets: a line says `ok` only when the whole answer was handed to the
// connection. A client that closes (FIN) or resets (RST) before that, or a reader the gateway
// drops at its stall timeout, leaves lines that say `aborted`.

const h = useHarness()

type Line = Record<string, unknown>
const auditSince = (mark: number): Line[] => auditLinesSince(h, mark)

/** The eight `workspace.read` lines of one batch (see `bigBatch`) logged since `mark`. */
const batchLines = (mark: number): Promise<Line[]> =>
  pollUntil(
    () => {
      const found = auditSince(mark).filter((l) => l.tool === 'gateway.workspace.read')
      return found.length === 8 ? found : undefined
    },
    { timeoutMs: 10_000, what: 'eight lines' },
  )

let gateway: Gateway
let server: RunningServer

beforeAll(async () => {
  // Its JSON form is twice its size: eight reads make an answer of about 5 MB, far more than
  // the kernel buffers of a connection hold.
  await writeFile(join(h.creds.workspace, 'big.txt'), '"\\'.repeat(120 * 1024))
  gateway = h.extraGateway({
    gateway: {
      // The fake's runs go on until a test ends them: the run limits are tested elsewhere.
      limits: {
        responseStallTimeoutMs: 1_000,
        ratePerSecond: 100_000,
        rateBurst: 100_000,
        concurrentRuns: 1_000,
        runsPerMinute: 1_000_000,
        runBurst: 10_000,
      },
    },
  })
  server = await gateway.listen()
})

interface Exchange {
  socket: Socket
  /** Bytes received so far. */
  bytes: () => number
  /** The first 64 KiB received. */
  text: () => string
  /** Resolves once the response head has arrived. */
  head: Promise<void>
  /** Resolves once the first bytes of the body have arrived after the head. */
  body: Promise<void>
  closed: Promise<void>
}

/**
 * POSTs `payload` on a raw connection with `key`: a 2025-era request, or (`modern`) a 2026-07-28
 * one of a single call, which the gateway answers as plain JSON once the result is there.
 */
function rawPost(key: string, payload: unknown, modern = false, http = '1.1'): Exchange {
  const message = payload as { method?: string; params?: { name?: string; _meta?: unknown } }
  const body = JSON.stringify(
    modern
      ? {
          ...message,
          params: {
            ...message.params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }
      : payload,
  )
  const version = modern
    ? `2026-07-28\r\nMcp-Method: ${message.method}\r\nMcp-Name: ${message.params?.name}`
    : '2025-06-18'
  const socket = connect(server.port, '127.0.0.1')
  socket.on('error', () => {})
  let text = ''
  let received = 0
  let onHead: () => void = () => {}
  let onBody: () => void = () => {}
  const head = new Promise<void>((resolve) => {
    onHead = resolve
  })
  const bodyStarted = new Promise<void>((resolve) => {
    onBody = resolve
  })
  socket.on('data', (chunk: Buffer) => {
    received += chunk.byteLength
    if (text.length < 65_536) text += chunk.toString('latin1')
    const end = text.indexOf('\r\n\r\n')
    if (end >= 0) onHead()
    if (end >= 0 && received > end + 4 + 16) onBody()
  })
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.write(
    `POST /mcp HTTP/${http}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: ${version}\r\nAuthorization: Bearer ${key}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  )
  return { socket, bytes: () => received, text: () => text, head, body: bodyStarted, closed }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const bigBatch = () =>
  Array.from({ length: 8 }, (_, i) => rpcCall(i + 1, 'gateway.workspace.read', { path: 'big.txt' }))

describe('the audit log over real sockets: ok only when the whole answer was written', () => {
  it.each([
    ['an event stream (2025-06-18)', false],
    ['plain JSON (2026-07-28)', true],
  ])(
    'a waiting agent.run answered as %s whose client closes its socket normally (FIN) is aborted, not ok',
    async (_, modern) => {
      const mark = h.logs.lines().length
      const x = rawPost(
        h.creds.keys.chat,
        rpcCall(1, 'gateway.agent.run', { message: 'fin leaves', waitMs: 8_000 }),
        modern,
      )
      // An event stream's head comes at once; nothing of a JSON answer is sent before it is whole.
      if (modern) await sleep(500)
      else await x.head
      await sleep(200)
      const t0 = performance.now()
      // A full close: the kernel sends FIN (nothing unread), like an aborted fetch or a closed
      // python socket.
      x.socket.destroy()
      const line = await pollUntil(() => auditSince(mark).find((l) => l.tool === 'gateway.agent.run'), {
        timeoutMs: 12_000,
        what: 'the agent.run line',
      })
      expect(line, JSON.stringify(line)).toMatchObject({ tool: 'gateway.agent.run', outcome: 'aborted' })
      // Known (and logged) when the client left, long before the 8 s wait was up: the gateway
      // probes such a client (a comment line in a stream, an interim 100 before a JSON head).
      expect(performance.now() - t0).toBeLessThan(4_000)
      expect(line.durationMs as number).toBeLessThan(4_000)
    },
  )

  it.each([
    ['an event stream (2025-06-18)', false],
    ['plain JSON (2026-07-28)', true],
  ])(
    'a waiting job.get answered as %s soon after its client closed (FIN) is aborted, not ok',
    async (_, modern) => {
      const client = await h.connect('chat', { gateway })
      const before = new Set(h.fake.state.sessions.keys())
      const run = await client.ok('gateway.agent.run', { message: 'ends soon after the FIN', waitMs: 0 })
      const sid = [...h.fake.state.sessions.keys()].find((id) => !before.has(id)) as string
      const mark = h.logs.lines().length
      const x = rawPost(
        h.creds.keys.chat,
        rpcCall(1, 'gateway.job.get', { job: run.job, waitMs: 8_000 }),
        modern,
      )
      await sleep(60)
      x.socket.destroy()
      // The job ends a moment after the client left, well within one probe interval.
      await sleep(120)
      h.fake.completeTurn(sid, 'done')
      const line = await pollUntil(() => auditSince(mark).find((l) => l.tool === 'gateway.job.get'), {
        timeoutMs: 12_000,
        what: 'the job.get line',
      })
      expect(line, JSON.stringify(line)).toMatchObject({ outcome: 'aborted' })
      await client.close()
    },
  )

  it('a client that half-closes after its request and still reads gets the answer, logged ok', async () => {
    const mark = h.logs.lines().length
    const x = rawPost(
      h.creds.keys.chat,
      rpcCall(1, 'gateway.agent.run', { message: 'half close', waitMs: 300 }),
    )
    x.socket.end()
    await x.closed
    // The whole answer arrived: probed before its head (interim 100s, skipped by clients) and
    // while the stream waited (SSE comment lines), then the result.
    expect(x.text()).toMatch(/^(HTTP\/1\.1 100 Continue\r\n\r\n)*HTTP\/1\.1 200/)
    expect(x.text()).toContain('\r\n:\n')
    expect(x.text()).toMatch(/data: \{.*"result":\{.*"status":"running"/)
    expect(x.text()).toMatch(/0\r\n\r\n$/)
    const line = await pollUntil(() => auditSince(mark).find((l) => l.tool === 'gateway.agent.run'), {
      what: 'the agent.run line',
    })
    expect(line, JSON.stringify(line)).toMatchObject({ outcome: 'ok' })
    expect(line.durationMs as number).toBeGreaterThanOrEqual(300)
  })

  it('a waiting call answered as plain JSON to a client that half-closes and still reads: interim 100s, then the answer, logged ok', async () => {
    const mark = h.logs.lines().length
    const x = rawPost(
      h.creds.keys.chat,
      rpcCall(1, 'gateway.agent.run', { message: 'json half close', waitMs: 800 }),
      true,
    )
    x.socket.end()
    await x.closed
    expect(x.text()).toMatch(
      /^HTTP\/1\.1 100 Continue\r\n\r\n(HTTP\/1\.1 100 Continue\r\n\r\n)+HTTP\/1\.1 200 /,
    )
    expect(x.text()).toMatch(/content-type: application\/json/i)
    expect(x.text()).toMatch(/"result":\{.*"status":"running"/)
    const line = await pollUntil(() => auditSince(mark).find((l) => l.tool === 'gateway.agent.run'), {
      what: 'the agent.run line',
    })
    expect(line, JSON.stringify(line)).toMatchObject({ outcome: 'ok' })
    expect(line.durationMs as number).toBeGreaterThanOrEqual(800)
  })

  it('an HTTP/1.0 client that half-closes gets no interim response (HTTP/1.0 has none), only its answer', async () => {
    const x = rawPost(
      h.creds.keys.chat,
      rpcCall(1, 'gateway.agent.run', { message: 'old client', waitMs: 600 }),
      true,
      '1.0',
    )
    x.socket.end()
    await x.closed
    expect(x.text()).toMatch(/^HTTP\/1\.1 200 /)
    expect(x.text()).not.toContain('100 Continue')
    expect(x.text()).toMatch(/"result":\{.*"status":"running"/)
  })

  it('a batch answer the client resets mid-way (RST) logs every call aborted', async () => {
    const mark = h.logs.lines().length
    const x = rawPost(h.creds.keys.read, bigBatch())
    await x.body
    x.socket.resetAndDestroy()
    const lines = await batchLines(mark)
    expect(
      lines.map((l) => l.outcome),
      JSON.stringify(lines),
    ).toEqual(Array.from({ length: 8 }, () => 'aborted'))
  })

  it('the same batch read to its end logs every call ok', async () => {
    const mark = h.logs.lines().length
    const x = rawPost(h.creds.keys.read, bigBatch())
    await x.head
    await sleep(100)
    const lines = await batchLines(mark)
    expect(lines.map((l) => l.outcome)).toEqual(Array.from({ length: 8 }, () => 'ok'))
    expect(x.bytes()).toBeGreaterThan(4_000_000)
    x.socket.destroy()
  })

  it('a batch answer the gateway drops at its stall timeout (a reader that stopped) logs every call aborted, stalled', async () => {
    const mark = h.logs.lines().length
    const x = rawPost(h.creds.keys.read, bigBatch())
    await x.head
    x.socket.pause()
    const t0 = performance.now()
    const lines = await batchLines(mark)
    expect(
      lines.map((l) => [l.outcome, l.errorCode]),
      JSON.stringify(lines),
    ).toEqual(Array.from({ length: 8 }, () => ['aborted', 'stalled']))
    // Logged when the gateway dropped the connection, after the 1 s stall timeout.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900)
    expect(lines[0]?.durationMs as number).toBeGreaterThanOrEqual(900)
    x.socket.destroy()
  })
})
