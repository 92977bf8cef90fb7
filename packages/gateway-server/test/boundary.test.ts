import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../src/index.js'
import {
  type Credentials,
  captureLogger,
  makeCredentials,
  rpc,
  rpcBody,
  testSecret,
  unreachableRuntime,
} from './helpers.js'

const BASE = 'http://gateway.test'
const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }
const init = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
}

let creds: Credentials
let gateway: Gateway
let logs: ReturnType<typeof captureLogger>

beforeAll(async () => {
  creds = await makeCredentials()
  logs = captureLogger()
  gateway = createGateway({
    keys: creds.resolver,
    handleSecret: testSecret(),
    runtime: unreachableRuntime,
    workspaceRoot: creds.workspace,
    allowedOrigins: 'https://app.example.com, http://localhost:5173',
    logger: logs.logger,
    maxRequestBodyBytes: 64 * 1024,
  })
})
afterAll(async () => {
  await gateway.close()
  await creds.cleanup()
})

describe('paths', () => {
  it('answers GET /health with ok true while the runtime answers', async () => {
    const res = await gateway.fetch(new Request(`${BASE}/health`))
    expect(res.status).toBe(200)
    // No moderator configured: it is reported, and ordinary input still flows (ok is the runtime's).
    expect(await res.json()).toEqual({ ok: true, runtime: 'ok', moderator: 'unavailable' })
  })

  it('answers /health with 503 and ok false when the runtime does not answer', async () => {
    const down = createGateway({
      keys: creds.resolver,
      handleSecret: testSecret(),
      runtime: { ...unreachableRuntime, healthy: async () => false },
      workspaceRoot: creds.workspace,
    })
    const res = await down.fetch(new Request(`${BASE}/health`))
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ ok: false, runtime: 'unavailable', moderator: 'unavailable' })
    await down.close()
  })

  it('refuses other methods on /health', async () => {
    const res = await gateway.fetch(new Request(`${BASE}/health`, { method: 'POST' }))
    expect(res.status).toBe(405)
  })

  it.each([
    '/',
    '/mcp/x',
    '//mcp',
    '/health/',
    '/MCP',
    '/mcp/',
    '/.well-known/oauth-protected-resource',
    '/doc',
    '/session',
    '/global/health',
    '/event',
  ])('answers 404 for %s', async (path) => {
    const res = await gateway.fetch(
      new Request(`${BASE}${path}`, { headers: { authorization: `Bearer ${creds.keys.full}` } }),
    )
    expect(res.status).toBe(404)
  })
})

describe('bearer authentication', () => {
  const cases: Array<[string, () => Record<string, string>]> = [
    ['missing', () => ({})],
    ['empty bearer', () => ({ authorization: 'Bearer ' })],
    [
      'basic scheme',
      () => ({ authorization: `Basic ${Buffer.from(`owner:${creds.keys.full}`).toString('base64')}` }),
    ],
    ['weak (short) key', () => ({ authorization: 'Bearer short-key' })],
    ['over-long key', () => ({ authorization: `Bearer ${'a'.repeat(513)}` })],
    ['malformed (non-ASCII) key', () => ({ authorization: `Bearer ${'é'.repeat(40)}` })],
    ['unknown key', () => ({ authorization: `Bearer ${'x'.repeat(48)}` })],
    ['key with a trailing character', () => ({ authorization: `Bearer ${creds.keys.full}x` })],
    ['two keys joined', () => ({ authorization: `Bearer ${creds.keys.full}, Bearer ${creds.keys.chat}` })],
    ['key without scheme', () => ({ authorization: creds.keys.full })],
  ]

  it.each(cases)('rejects a %s credential with 401 and a Bearer challenge', async (_, headers) => {
    const res = await gateway.fetch(rpc(`${BASE}/mcp`, listTools, headers()))
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="sallyport"/)
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'Unauthorized' },
    })
  })

  it('accepts a valid key', async () => {
    const res = await gateway.fetch(rpc(`${BASE}/mcp`, init, { authorization: `Bearer ${creds.keys.chat}` }))
    expect(res.status).toBe(200)
  })

  it('advertises tools, resources and prompts whose lists never change', async () => {
    const res = await gateway.fetch(rpc(`${BASE}/mcp`, init, { authorization: `Bearer ${creds.keys.read}` }))
    const body = await rpcBody<{ result: { capabilities: Record<string, { listChanged?: boolean }> } }>(res)
    const capabilities = body.result.capabilities
    for (const kind of ['tools', 'resources', 'prompts'])
      expect(capabilities[kind]).toEqual({ listChanged: false })
  })

  it('accepts the scheme in any case', async () => {
    const res = await gateway.fetch(rpc(`${BASE}/mcp`, init, { authorization: `bearer ${creds.keys.chat}` }))
    expect(res.status).toBe(200)
  })

  it('never logs the presented key', async () => {
    await gateway.fetch(rpc(`${BASE}/mcp`, listTools, { authorization: `Bearer ${creds.keys.full}zz` }))
    // The audit line is written once the answer's last byte has been read.
    await (
      await gateway.fetch(rpc(`${BASE}/mcp`, init, { authorization: `Bearer ${creds.keys.full}` }))
    ).text()
    expect(logs.raw()).not.toContain(creds.keys.full)
    expect(logs.lines().some((l) => l.event === 'audit' && l.username === 'owner')).toBe(true)
  })
})

describe('CORS on /mcp', () => {
  it('allows a request without Origin (non-browser client)', async () => {
    const res = await gateway.fetch(rpc(`${BASE}/mcp`, init, { authorization: `Bearer ${creds.keys.chat}` }))
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  it.each([
    'https://evil.example.com',
    'https://app.example.com.evil.com',
    'http://app.example.com',
    'null',
    'https://APP.example.com',
  ])('refuses Origin %s with 403 before authentication', async (origin) => {
    for (const headers of [
      { origin },
      { origin, authorization: `Bearer ${creds.keys.full}` },
      { origin, authorization: 'Bearer nope' },
    ] as Array<Record<string, string>>) {
      const res = await gateway.fetch(rpc(`${BASE}/mcp`, listTools, headers))
      expect(res.status).toBe(403)
      expect(res.headers.get('www-authenticate')).toBeNull()
    }
  })

  it('serves an allowlisted origin and exposes the MCP headers, never cookies', async () => {
    const res = await gateway.fetch(
      rpc(`${BASE}/mcp`, init, {
        origin: 'https://app.example.com',
        authorization: `Bearer ${creds.keys.chat}`,
      }),
    )
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase()
    for (const h of ['mcp-session-id', 'mcp-protocol-version', 'x-request-id']) expect(exposed).toContain(h)
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    expect(res.headers.get('set-cookie')).toBeNull()
  })

  it('answers an allowed preflight with the Authorization header allowed', async () => {
    const res = await gateway.fetch(
      new Request(`${BASE}/mcp`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:5173',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
        },
      }),
    )
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173')
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization')
    expect(res.headers.get('access-control-allow-methods')).toContain('POST')
  })

  it('refuses a preflight from a foreign origin', async () => {
    const res = await gateway.fetch(
      new Request(`${BASE}/mcp`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
      }),
    )
    expect(res.status).toBe(403)
  })

  it('rejects a malformed allowlist at creation', () => {
    expect(() =>
      createGateway({
        keys: creds.resolver,
        handleSecret: testSecret(),
        runtime: unreachableRuntime,
        workspaceRoot: creds.workspace,
        allowedOrigins: 'app.example.com',
      }),
    ).toThrow(TypeError)
    expect(() =>
      createGateway({
        keys: creds.resolver,
        handleSecret: testSecret(),
        runtime: unreachableRuntime,
        workspaceRoot: creds.workspace,
        allowedOrigins: 'https://a.com/path',
      }),
    ).toThrow(TypeError)
  })
})

describe('over real HTTP', () => {
  let url: string
  let close: () => Promise<void>
  beforeAll(async () => {
    const server = await gateway.listen({ port: 0 })
    url = server.url
    close = server.close
  })
  afterAll(async () => close())

  // A raw HTTP/1.1 request over a socket: the only way to send the same header twice.
  const send = (headers: Array<[string, string]>, body: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const target = new URL(url)
      const socket = connect(Number(target.port), target.hostname)
      let text = ''
      socket.on('data', (chunk) => {
        text += chunk.toString()
      })
      socket.on('error', reject)
      socket.on('close', () => {
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
        resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) })
      })
      const lines = [
        'POST /mcp HTTP/1.1',
        `Host: ${target.host}`,
        'Connection: close',
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...headers.map(([k, v]) => `${k}: ${v}`),
      ]
      socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`)
    })

  it('rejects duplicated Authorization headers even when both carry the same valid key', async () => {
    const key = creds.keys.full
    const res = await send(
      [
        ['content-type', 'application/json'],
        ['accept', 'application/json, text/event-stream'],
        ['authorization', `Bearer ${key}`],
        ['authorization', `Bearer ${key}`],
      ],
      JSON.stringify(init),
    )
    expect(res.status).toBe(401)
  })

  it('accepts one valid Authorization header over HTTP', async () => {
    const res = await send(
      [
        ['content-type', 'application/json'],
        ['accept', 'application/json, text/event-stream'],
        ['authorization', `Bearer ${creds.keys.full}`],
      ],
      JSON.stringify(init),
    )
    expect(res.status, res.body.slice(0, 300)).toBe(200)
  })

  it('answers 413 for a body over the limit', async () => {
    const res = await send(
      [
        ['content-type', 'application/json'],
        ['accept', 'application/json, text/event-stream'],
        ['authorization', `Bearer ${creds.keys.full}`],
      ],
      JSON.stringify({ ...listTools, params: { pad: 'x'.repeat(80 * 1024) } }),
    )
    expect(res.status).toBe(413)
  })
})

describe('refusals before authentication in the log', () => {
  it('logs a flood of keyless requests one line each up to 20 a second, and counts the rest', async () => {
    const floodLogs = captureLogger()
    const g = createGateway({
      keys: creds.resolver,
      handleSecret: testSecret(),
      runtime: unreachableRuntime,
      workspaceRoot: creds.workspace,
      logger: floodLogs.logger,
    })
    try {
      for (let i = 0; i < 60; i++) {
        const res = await g.fetch(rpc(`${BASE}/mcp`, listTools, {}))
        expect(res.status).toBe(401)
      }
      const single = () => floodLogs.lines().filter((l) => l.event === 'http' && l.status === 401)
      const counted = () =>
        floodLogs
          .lines()
          .filter((l) => l.event === 'http_refusals_unlogged')
          .reduce((n, l) => n + (l.count as number), 0)
      // Every refusal is in the log, one way or the other, once its second has ended.
      await expect.poll(() => single().length + counted(), { timeout: 5_000 }).toBe(60)
      expect(single().length).toBeLessThan(60)
      expect(counted()).toBeGreaterThan(0)
    } finally {
      await g.close()
    }
  })
})
