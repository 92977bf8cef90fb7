import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { type AuthProxy, startAuthProxy } from './auth-proxy.ts'

let upstream: Server | undefined
let proxy: AuthProxy | undefined
afterEach(async () => {
  await proxy?.close()
  upstream?.closeAllConnections()
  await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve(undefined)))
  proxy = undefined
  upstream = undefined
})

/** An upstream that records the headers it got and answers with an SSE stream in two chunks. */
async function startUpstream(): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = []
  upstream = createServer((req, res) => {
    seen.push(req.headers)
    let body = ''
    req.on('data', (c) => {
      body += c
    })
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'text/event-stream', 'x-upstream': 'yes' })
      res.write(`data: ${body}\n\n`)
      setImmediate(() => res.end('data: end\n\n'))
    })
  })
  await new Promise<void>((resolve) => upstream?.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, seen }
}

describe('startAuthProxy', () => {
  it('sets Authorization and forwards method, path, body, Host, Origin and the response unchanged', async () => {
    const up = await startUpstream()
    proxy = await startAuthProxy({ target: up.url, authorization: 'Bearer agk_test_key_value' })
    const res = await fetch(`${proxy.url}/mcp?x=1`, {
      method: 'POST',
      headers: { Origin: 'http://evil.example', Authorization: 'Bearer client-own', 'X-Extra': 'kept' },
      body: '{"a":1}',
    })
    expect(res.status).toBe(201)
    expect(res.headers.get('x-upstream')).toBe('yes')
    expect(await res.text()).toBe('data: {"a":1}\n\ndata: end\n\n')
    expect(up.seen[0]).toMatchObject({
      authorization: 'Bearer agk_test_key_value',
      origin: 'http://evil.example',
      host: new URL(proxy.url).host,
      'x-extra': 'kept',
    })
    expect(proxy.exchanges).toEqual([{ method: 'POST', path: '/mcp?x=1', status: 201 }])
  })

  it('reads a function target and authorization per request', async () => {
    const up = await startUpstream()
    let target = ''
    proxy = await startAuthProxy({ target: () => target, authorization: () => 'Bearer late-bound-key' })
    expect((await fetch(`${proxy.url}/`)).status).toBe(502)
    target = up.url
    expect((await fetch(`${proxy.url}/`)).status).toBe(201)
    expect(up.seen[0]?.authorization).toBe('Bearer late-bound-key')
  })

  it('answers 502 when the upstream is unreachable', async () => {
    proxy = await startAuthProxy({ target: 'http://127.0.0.1:1', authorization: 'Bearer x-key-value' })
    expect((await fetch(`${proxy.url}/mcp`)).status).toBe(502)
  })

  it.each(['https://example.com', 'http://127.0.0.1:1/path', 'not a url'])(
    'refuses target %s',
    async (target) => {
      await expect(startAuthProxy({ target, authorization: 'Bearer x' })).rejects.toThrow(TypeError)
    },
  )

  it('refuses an empty authorization', async () => {
    await expect(startAuthProxy({ target: 'http://127.0.0.1:1', authorization: ' ' })).rejects.toThrow(
      TypeError,
    )
  })
})
