import { Agent, request as httpRequest } from 'node:http'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../src/http/listen.js'
import { createGateway, type Gateway } from '../src/index.js'
import {
  type Credentials,
  captureLogger,
  makeCredentials,
  testSecret,
  unreachableRuntime,
} from './helpers.js'

// The HTTP boundary under abuse, over real sockets: nothing of a body is read before the Origin
// and the credential are checked, bounded deadlines and caps, and long keep-alive connections.

const init = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
}
const listTools = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }

let creds: Credentials
let logs: ReturnType<typeof captureLogger>
let gateway: Gateway
let server: RunningServer

beforeAll(async () => {
  creds = await makeCredentials()
  logs = captureLogger()
  gateway = createGateway({
    keys: creds.resolver,
    handleSecret: testSecret(),
    runtime: unreachableRuntime,
    workspaceRoot: creds.workspace,
    allowedOrigins: 'https://app.example.com',
    logger: logs.logger,
    limits: {
      headersTimeoutMs: 500,
      bodyTimeoutMs: 500,
      maxInFlightBodies: 3,
      maxInFlightBodiesPerCredential: 2,
      maxConnections: 40,
      ratePerSecond: 100_000,
      rateBurst: 100_000,
    },
  })
  server = await gateway.listen()
})
afterAll(async () => {
  await gateway.close()
  await creds.cleanup()
})

interface Exchange {
  /** The raw response bytes received so far. */
  text: () => string
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>
  socket: Socket
  /** Resolves with the status line once a response head has arrived. */
  status: Promise<number>
}

/** Opens a raw connection and writes `head` (request line and headers, no body). */
function rawRequest(head: string): Exchange {
  const socket = connect(server.port, '127.0.0.1')
  let text = ''
  let onStatus: (status: number) => void = () => {}
  const status = new Promise<number>((resolve) => {
    onStatus = resolve
  })
  socket.on('data', (chunk) => {
    text += chunk.toString('latin1')
    const match = /^HTTP\/1\.1 (\d{3})/.exec(text)
    if (match) onStatus(Number(match[1]))
  })
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.write(head)
  return { text: () => text, closed, socket, status }
}

const postHead = (headers: Record<string, string>, contentLength: number): string =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${Object.entries(
    headers,
  )
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}Content-Length: ${contentLength}\r\n\r\n`

const withDeadline = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)),
  ])

describe('nothing of a body is read before the Origin and credential checks', () => {
  const BIG = 4 * 1024 * 1024 - 1

  it('answers a foreign Origin with 403 from the headers alone and closes the connection', async () => {
    // The 4 MiB body is announced but never sent: the answer cannot depend on reading it.
    const x = rawRequest(postHead({ Origin: 'https://evil.example' }, BIG))
    expect(await withDeadline(x.status, 2000, '403')).toBe(403)
    await withDeadline(x.closed, 2000, 'close')
    expect(x.text()).toMatch(/connection: close/i)
  })

  it('answers a missing or wrong key with 401 from the headers alone and closes the connection', async () => {
    const auths: Array<Record<string, string>> = [
      {},
      { Authorization: 'Bearer agk_not_a_real_key_0000000000000000000000' },
    ]
    for (const auth of auths) {
      const x = rawRequest(postHead(auth, BIG))
      expect(await withDeadline(x.status, 2000, '401')).toBe(401)
      await withDeadline(x.closed, 2000, 'close')
    }
  })

  it('stops reading a refused body: a client still sending finds the connection closed', async () => {
    const x = rawRequest(postHead({}, BIG))
    expect(await withDeadline(x.status, 2000, '401')).toBe(401)
    // Keep sending; the server has closed its side and must not swallow megabytes.
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let written = 0
    const writeError = new Promise<void>((resolve) => x.socket.once('error', () => resolve()))
    await withDeadline(
      Promise.race([
        writeError,
        x.closed,
        (async () => {
          while (written < BIG && !x.socket.destroyed) {
            if (!x.socket.write(chunk)) await new Promise((r) => x.socket.once('drain', r))
            written += chunk.length
          }
        })(),
      ]),
      5000,
      'refused body',
    )
    await withDeadline(x.closed, 5000, 'close')
    expect(written).toBeLessThan(BIG)
  })

  it('a refused client still sending its body, slow to read, gets the answer (no reset drops it)', async () => {
    // A client on a busy machine: it keeps sending its 200 kB body and reads only after 150 ms.
    // Closed at once with the body unread, the connection would be reset and the answer lost.
    for (let i = 0; i < 5; i++) {
      const x = rawRequest(
        postHead({ Authorization: 'Bearer agk_not_a_real_key_0000000000000000000000' }, 200_000),
      )
      x.socket.pause()
      const chunk = Buffer.alloc(16 * 1024, 0x20)
      let sent = 0
      const send = (): void => {
        if (sent >= 200_000 || x.socket.destroyed) return
        x.socket.write(chunk)
        sent += chunk.length
        setTimeout(send, 5)
      }
      send()
      setTimeout(() => x.socket.resume(), 150)
      await withDeadline(x.closed, 5000, 'close')
      expect(x.text()).toMatch(/^HTTP\/1\.1 401/)
    }
  })

  it('answers 100 unauthenticated 4 MiB uploads at once without holding their bodies', async () => {
    const before = process.memoryUsage().rss
    const all = Array.from({ length: 100 }, () =>
      rawRequest(postHead({ Origin: 'https://evil.example' }, BIG)),
    )
    const statuses = await withDeadline(Promise.all(all.map((x) => x.status)), 5000, '100 uploads')
    expect(new Set(statuses)).toEqual(new Set([403]))
    await Promise.all(all.map((x) => withDeadline(x.closed, 5000, 'close')))
    // Nothing was buffered: far less than the 400 MiB the bodies would take.
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024)
  })
})

describe('deadlines and caps', () => {
  it('answers an authenticated body that does not arrive in time with 408', async () => {
    const x = rawRequest(postHead({ Authorization: `Bearer ${creds.keys.full}` }, 100))
    x.socket.write('{"jsonrpc":')
    expect(await withDeadline(x.status, 3000, '408')).toBe(408)
    await withDeadline(x.closed, 3000, 'close')
  })

  it('closes a connection whose headers do not arrive in time', async () => {
    const x = rawRequest('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    await withDeadline(x.closed, 4000, 'header deadline')
  })

  it('answers 413 from the Content-Length of an authenticated request, without reading it', async () => {
    const x = rawRequest(postHead({ Authorization: `Bearer ${creds.keys.full}` }, 5 * 1024 * 1024))
    expect(await withDeadline(x.status, 2000, '413')).toBe(413)
  })

  it('reads at most maxInFlightBodiesPerCredential bodies per credential (429), maxInFlightBodies in all (503)', async () => {
    const slowBody = (key: string): Exchange => {
      const x = rawRequest(postHead({ Authorization: `Bearer ${key}` }, 100))
      x.socket.write('{')
      return x
    }
    const owner = [slowBody(creds.keys.full), slowBody(creds.keys.full)]
    // Both of the owner's are being read once a third of the owner's is refused.
    let third: Exchange | undefined
    const deadline = performance.now() + 2000
    while (performance.now() < deadline) {
      third = slowBody(creds.keys.full)
      const status = await Promise.race([
        third.status,
        new Promise<number>((r) => setTimeout(() => r(0), 50)),
      ])
      if (status === 429) break
      third.socket.destroy()
    }
    expect(await third?.status).toBe(429)
    expect(third?.text()).toMatch(/rate_limited/)
    // Other credentials still have their bodies read, up to the cap of all (3): of two more, one
    // takes the last slot and the other is refused with 503.
    const other = slowBody(creds.keys.chat)
    const fourth = slowBody(creds.keys.read)
    const first = await withDeadline(
      Promise.race([other.status.then(() => other), fourth.status.then(() => fourth)]),
      2000,
      '503',
    )
    expect(await first.status).toBe(503)
    expect(first.text()).toMatch(/retry-after: 1/i)
    for (const x of [...owner, other, fourth, ...(third ? [third] : [])]) x.socket.destroy()
  })

  it('after refusing a request whose small body had arrived (429), serves the next request on the same connection', async () => {
    const slowBody = (key: string): Exchange => {
      const x = rawRequest(postHead({ Authorization: `Bearer ${key}` }, 100))
      x.socket.write('{')
      return x
    }
    const held = [slowBody(creds.keys.full), slowBody(creds.keys.full)]
    const body = JSON.stringify(listTools)
    const whole = (key: string): string =>
      `${postHead({ Authorization: `Bearer ${key}` }, Buffer.byteLength(body))}${body}`
    let refused: Exchange | undefined
    const deadline = performance.now() + 2000
    while (performance.now() < deadline) {
      // The whole request in one write: its small body has arrived when the gateway refuses it.
      refused = rawRequest(whole(creds.keys.full))
      const status = await Promise.race([
        refused.status,
        new Promise<number>((r) => setTimeout(() => r(0), 50)),
      ])
      if (status === 429) break
      refused.socket.destroy()
    }
    try {
      expect(await refused?.status).toBe(429)
      const x = refused as Exchange
      // A keep-alive client sends its next request on the same connection. Either the gateway
      // said it closes the connection (and does), or it reads and answers that next request
      // (the refused body was discarded): never leaves it waiting for the idle timeout.
      await new Promise((r) => setTimeout(r, 50))
      const closing = /connection: close/i.test(x.text())
      x.socket.write(whole(creds.keys.chat))
      if (closing) await withDeadline(x.closed, 3000, 'close after the refusal')
      else
        await expect
          .poll(() => x.text().match(/^HTTP\/1\.1 \d{3}/gm) ?? [], { timeout: 3000 })
          .toEqual(['HTTP/1.1 429', 'HTTP/1.1 200'])
    } finally {
      for (const h of [...held, ...(refused ? [refused] : [])]) h.socket.destroy()
    }
  })

  it('answers TRACE (and other methods) on /mcp with 405 before any check, with no error logged', async () => {
    const mark = logs.lines().length
    const x = rawRequest('TRACE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n\r\n')
    expect(await withDeadline(x.status, 2000, '405')).toBe(405)
    expect(x.text()).toMatch(/allow: GET, POST, DELETE, OPTIONS/i)
    x.socket.destroy()
    expect(
      logs
        .lines()
        .slice(mark)
        .filter((l) => (l.level as number) >= 50),
    ).toEqual([])
  })
})

describe('bodies too costly to parse (one thread serves every credential)', () => {
  const post = (body: string) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${creds.keys.chat}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body,
    })
  const call = (args: string) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gateway.session.list","arguments":${args}}}`

  it.each([
    [
      '250 000 unknown keys (2.9 MB)',
      call(`{${Array.from({ length: 250_000 }, (_, i) => `"k${i}":1`).join(',')}}`),
    ],
    ['a million nested arrays', call(`{"a":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`)],
    ['a batch of 20 000 tiny values', `[${Array.from({ length: 20_000 }, () => '0').join(',')}]`],
  ])('refuses %s before parsing it: 400, a short answer, an audit line', async (_, body) => {
    const mark = logs.lines().length
    const response = await post(body)
    const text = await response.text()
    expect(response.status).toBe(400)
    expect(text.length).toBeLessThan(300)
    expect(JSON.parse(text).error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/too complex/),
    })
    expect(
      logs
        .lines()
        .slice(mark)
        .some((l) => l.event === 'audit' || l.event === 'http'),
    ).toBe(true)
  })

  it.each([
    ['invalid JSON', '{"jsonrpc":', false],
    ['a message that is not JSON-RPC', '{"hello":"world"}', true],
    ['a JSON-RPC request with a wrong version', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}', true],
    [
      'a batch over the cap',
      JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ ...listTools, id: i }))),
      false,
    ],
  ])(
    "answers %s with 400 and logs it as the client's error (warn), not the gateway's",
    async (_, body, bySdk) => {
      const mark = logs.lines().length
      const response = await post(body)
      expect(response.status).toBe(400)
      await response.text()
      const lines = logs.lines().slice(mark)
      // Any key holder can send these: they must not reach the error level, where alerts look.
      expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([])
      expect(lines.some((l) => l.event === 'audit' || l.event === 'http')).toBe(true)
      // Refused by the SDK (the gateway's own checks passed it on): its report is kept, at warn.
      if (bySdk)
        expect(lines.filter((l) => l.event === 'mcp_client_error')).toMatchObject([
          { level: 40, status: 400 },
        ])
    },
  )

  it('still serves an ordinary call with strings of any length inside the bounds', async () => {
    const message = '{[,'.repeat(300_000) // brackets and commas inside a string count for nothing
    const response = await post(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gateway.catalog.get","arguments":{"note":${JSON.stringify(message)}}}}`,
    )
    expect(response.status).toBe(200)
    expect(await response.text()).not.toMatch(/too complex/)
  })
})

describe('OPTIONS without an Origin (not a preflight)', () => {
  it('answers 204 with the methods of /mcp, with or without a key', async () => {
    for (const headers of [{}, { Authorization: `Bearer ${creds.keys.full}` }] as Array<
      Record<string, string>
    >) {
      const res = await fetch(`${server.url}/mcp`, { method: 'OPTIONS', headers })
      expect(res.status).toBe(204)
      expect(res.headers.get('allow')).toBe('GET, POST, DELETE, OPTIONS')
    }
  })
})

describe('long keep-alive connections', () => {
  it('serves 2 100 calls on one keep-alive connection, all on that connection, without a 503', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const sockets = new Set<unknown>()
    const body = JSON.stringify(listTools)
    const call = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${server.url}/mcp`,
          {
            agent,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'mcp-protocol-version': '2025-06-18',
              authorization: `Bearer ${creds.keys.full}`,
            },
          },
          (res) => {
            sockets.add(res.socket)
            res.resume()
            res.on('end', () => resolve(res.statusCode ?? 0))
          },
        )
        req.on('error', reject)
        req.end(body)
      })
    const statuses = new Map<number, number>()
    for (let i = 0; i < 2100; i++) {
      const status = await call()
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
    }
    agent.destroy()
    expect(Object.fromEntries(statuses)).toEqual({ 200: 2100 })
    // No bound per connection: the server never closed it.
    expect(sockets.size).toBe(1)
  }, 120_000)

  it('serves 2 100 pipelined calls on one connection (two in flight at a time) without a 503', async () => {
    // Node's per-connection bound answered each request pipelined past it with a bare 503.
    const body = JSON.stringify(listTools)
    const request = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nAuthorization: Bearer ${creds.keys.full}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    const total = 2100
    const socket = connect(server.port, '127.0.0.1')
    const statuses = new Map<string, number>()
    let sent = 0
    let answered = 0
    let tail = ''
    const done = new Promise<void>((resolve, reject) => {
      socket.on('error', reject)
      socket.on('close', () => resolve())
      socket.on('data', (chunk) => {
        // Status lines of the answers, counted as they arrive (a line may straddle two chunks).
        const text = tail + chunk.toString('latin1')
        for (const match of text.matchAll(/HTTP\/1\.1 (\d{3})/g)) {
          statuses.set(match[1] as string, (statuses.get(match[1] as string) ?? 0) + 1)
          answered++
          if (sent < total) {
            socket.write(request)
            sent++
          }
        }
        tail = text.slice(Math.max(0, text.lastIndexOf('HTTP/1.1 ') + 1, text.length - 16))
        if (answered >= total) socket.end()
      })
    })
    socket.write(request + request)
    sent = 2
    await withDeadline(done, 110_000, 'pipelined calls')
    expect(Object.fromEntries(statuses)).toEqual({ 200: total })
  }, 120_000)
})

describe('answers for a presented but invalid credential', () => {
  it('adds error="invalid_token" to the challenge only when a token was presented (RFC 6750)', async () => {
    const post = (authorization?: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization !== undefined && { authorization }),
        },
        body: JSON.stringify(init),
      })
    const missing = await post()
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="sallyport"')
    const wrong = await post('Bearer agk_wrong_wrong_wrong_wrong_wrong_wrong_wrong')
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="sallyport", error="invalid_token"')
    const malformed = await post('Basic dXNlcjpwYXNz')
    expect(malformed.headers.get('www-authenticate')).toBe(
      'Bearer realm="sallyport", error="invalid_request"',
    )
  })
})

describe('Expect: 100-continue', () => {
  it('invites no body from a request without a valid key: 401 comes first, never 100 Continue', async () => {
    const x = rawRequest(postHead({ Expect: '100-continue' }, 1024))
    expect(await withDeadline(x.status, 2000, '401')).toBe(401)
    await withDeadline(x.closed, 2000, 'close')
    expect(x.text()).not.toMatch(/100 Continue/i)
  })

  it('invites the body of an authenticated request, then answers it', async () => {
    const body = JSON.stringify(init)
    const x = rawRequest(
      postHead(
        { Expect: '100-continue', Authorization: `Bearer ${creds.keys.full}`, Connection: 'close' },
        Buffer.byteLength(body),
      ),
    )
    await withDeadline(
      new Promise<void>((resolve) => {
        const look = (): void => {
          if (/^HTTP\/1\.1 100 Continue/i.test(x.text())) resolve()
          else x.socket.once('data', look)
        }
        look()
      }),
      2000,
      '100 Continue',
    )
    x.socket.write(body)
    await withDeadline(x.closed, 5000, 'answer')
    expect(x.text()).toMatch(/HTTP\/1\.1 200/)
  })
})

describe('clients that stop reading their answers', () => {
  let g: Gateway
  let s: RunningServer
  const stallLogs = captureLogger()
  beforeAll(async () => {
    // A text file whose JSON form is twice its size, read ten times per request: several MiB per
    // answer, more than the kernel buffers of a connection that nobody reads.
    const { writeFile } = await import('node:fs/promises')
    const { join } = await import('node:path')
    await writeFile(join(creds.workspace, 'quotes.txt'), '"\\'.repeat(120 * 1024))
    g = createGateway({
      keys: creds.resolver,
      handleSecret: testSecret(),
      runtime: unreachableRuntime,
      workspaceRoot: creds.workspace,
      logger: stallLogs.logger,
      limits: {
        responseStallTimeoutMs: 1_000,
        maxStalledResponsesPerCredential: 2,
        ratePerSecond: 100_000,
        rateBurst: 100_000,
        // Four batches of ten reads are in progress at once here.
        concurrentCalls: 1_000,
      },
    })
    s = await g.listen()
  })
  afterAll(async () => {
    await g.close()
  })

  /** A batch of ten reads of the big file, sent by a client that then stops reading. */
  function stalledReader(): { resume(): Promise<{ complete: boolean; bytes: number }> } {
    const batch = JSON.stringify(
      Array.from({ length: 10 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'gateway.workspace.read', arguments: { path: 'quotes.txt' } },
      })),
    )
    const socket = connect(s.port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nAuthorization: Bearer ${creds.keys.read}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(batch)}\r\n\r\n${batch}`,
    )
    // Read nothing: the answer fills the socket buffers and the rest waits in the server.
    socket.pause()
    return {
      // Starts reading again and reports whether the whole answer arrived before the close (a
      // connection the server dropped ends mid-answer).
      resume: () =>
        new Promise((resolve) => {
          const chunks: Buffer[] = []
          socket.on('data', (chunk: Buffer) => chunks.push(chunk))
          socket.once('close', () => {
            const text = Buffer.concat(chunks).toString('latin1')
            resolve({
              complete: text.endsWith('0\r\n\r\n') || /"id":10[,}]/.test(text.slice(-400_000)),
              bytes: text.length,
            })
          })
          socket.resume()
        }),
    }
  }

  it('drops a connection whose answer is not read within the stall timeout', async () => {
    const reader = stalledReader()
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    const got = await withDeadline(reader.resume(), 10_000, 'closed')
    expect(got.complete).toBe(false)
    // A reader that keeps reading gets the whole answer (the check can tell the two apart).
    const quick = stalledReader()
    const whole = await withDeadline(quick.resume(), 10_000, 'closed')
    expect(whole.complete).toBe(true)
    expect(whole.bytes).toBeGreaterThan(got.bytes)
    // Both requests are in the audit log, the dropped one too: one line per read of each batch,
    // `ok` for the answer delivered whole, `aborted`/`stalled` for the one cut at the stall timeout.
    const reads = () =>
      stallLogs.lines().filter((l) => l.event === 'audit' && l.tool === 'gateway.workspace.read')
    await expect.poll(() => reads().length, { timeout: 5_000 }).toBe(20)
    const outcomes = reads().map((l) => `${l.outcome}${l.errorCode ? `/${l.errorCode}` : ''}`)
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(10)
    expect(outcomes.filter((o) => o === 'aborted/stalled')).toHaveLength(10)
  })

  it('holds at most maxStalledResponsesPerCredential stalled answers per credential: the others are dropped at once', async () => {
    const readers = Array.from({ length: 4 }, () => stalledReader())
    // Well within the stall timeout: only answers over the per-credential cap were dropped yet.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const got = await Promise.all(readers.map((r) => withDeadline(r.resume(), 10_000, 'closed')))
    expect(got.filter((g) => g.complete).length).toBeLessThanOrEqual(2)
    expect(got.filter((g) => !g.complete).length).toBeGreaterThanOrEqual(2)
  })
})

describe('the connection cap', () => {
  it('drops a connection past maxConnections at once, unanswered, and accepts again once one closes', async () => {
    // Idle keep-alive connections (an answered OPTIONS each; the server keeps them 5 s). Earlier
    // tests may still hold a few, so the cap (40) is reached at or before our 40th.
    const options = 'OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
    const held: Exchange[] = []
    let dropped: Exchange | undefined
    for (let i = 0; i < 60 && !dropped; i++) {
      const x = rawRequest(options)
      const outcome = await withDeadline(
        Promise.race([x.status.then(() => 'served' as const), x.closed.then(() => 'dropped' as const)]),
        2000,
        `connection ${i}`,
      )
      if (outcome === 'served') held.push(x)
      else dropped = x
    }
    try {
      expect(dropped, 'a connection past the cap was dropped').toBeDefined()
      expect(held.length).toBeLessThanOrEqual(40)
      expect(held.length).toBeGreaterThan(0)
      expect(dropped?.text()).toBe('')
      // One of ours goes: a new connection is served again (the server hears of the close soon).
      held.shift()?.socket.destroy()
      const deadline = Date.now() + 5_000
      let served = false
      while (!served && Date.now() < deadline) {
        const x = rawRequest(options)
        served = await Promise.race([x.status.then(() => true), x.closed.then(() => false)])
        if (served) held.push(x)
        else await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(served).toBe(true)
    } finally {
      for (const x of held) x.socket.destroy()
    }
  })
})
