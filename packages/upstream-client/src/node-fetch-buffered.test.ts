import { getEventListeners, once } from 'node:events'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import zlib from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { createUpstreamClient } from './client.ts'
import { UpstreamError } from './errors.ts'
import { createNodeFetch, type NodeFetch } from './node-fetch.ts'

// The default fetch's buffered GET (`bufferedGet`), which the client's reads use, against a real
// loopback server: answers read whole, aborts, cut connections, decoding, the shared pool; then
// the client's reads over it: pinning, errors, timeouts, retries and redaction as for the SDK's.

interface Server {
  readonly url: string
  readonly accepted: () => number
  readonly open: () => number
  readonly requests: http.IncomingMessage[]
  close(): Promise<void>
}

async function serve(handler: http.RequestListener): Promise<Server> {
  const sockets = new Set<Socket>()
  const requests: http.IncomingMessage[] = []
  let accepted = 0
  const server = http.createServer((request, response) => {
    requests.push(request)
    handler(request, response)
  })
  server.on('connection', (socket) => {
    accepted++
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    open: () => sockets.size,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      server.close()
      await once(server, 'close')
    },
  }
}

async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup(handler: http.RequestListener, options?: Parameters<typeof createNodeFetch>[0]) {
  const server = await serve(handler)
  const nodeFetch: NodeFetch = createNodeFetch(options)
  cleanups.push(
    () => server.close(),
    () => nodeFetch.close(),
  )
  return { server, nodeFetch }
}

const noSignal = () => new AbortController().signal

describe('bufferedGet', () => {
  it('sends a GET with the headers given and answers status, headers and the whole body', async () => {
    const { server, nodeFetch } = await setup((request, response) => {
      response.writeHead(201, { 'content-type': 'application/json', 'x-next-cursor': 'c1' })
      response.write('{"a":')
      setTimeout(() => response.end(`"${request.headers['x-test']}"}`), 20)
    })
    const answer = await nodeFetch.bufferedGet(new URL(`${server.url}/p?q=1`), { 'x-test': 'v' }, noSignal())
    expect(answer.status).toBe(201)
    expect(answer.headers['x-next-cursor']).toBe('c1')
    expect(answer.body.toString()).toBe('{"a":"v"}')
    expect(server.requests[0]?.method).toBe('GET')
    expect(server.requests[0]?.url).toBe('/p?q=1')
  })

  it('shares the pool with fetch: kept alive, reused, bounded by maxSockets', async () => {
    const { server, nodeFetch } = await setup(
      (_request, response) => setTimeout(() => response.end('x'), 10),
      {
        maxSockets: 2,
      },
    )
    const url = new URL(server.url)
    const bodies = await Promise.all(
      Array.from({ length: 10 }, () =>
        nodeFetch.bufferedGet(url, {}, noSignal()).then((a) => a.body.toString()),
      ),
    )
    expect(bodies).toEqual(Array(10).fill('x'))
    expect(await (await nodeFetch(server.url)).text()).toBe('x')
    expect(server.accepted()).toBe(2)
  })

  it('an abort before the answer rejects with the reason, closes the connection and leaves no listener', async () => {
    const { server, nodeFetch } = await setup(() => {
      // Never answers.
    })
    const controller = new AbortController()
    const pending = nodeFetch.bufferedGet(new URL(server.url), {}, controller.signal)
    await eventually(() => server.open() === 1)
    const reason = new Error('caller gave up')
    controller.abort(reason)
    await expect(pending).rejects.toBe(reason)
    await eventually(() => server.open() === 0)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('an abort in the middle of the body rejects with the reason too', async () => {
    const { server, nodeFetch } = await setup((_request, response) => {
      response.writeHead(200)
      response.write('partial')
    })
    const controller = new AbortController()
    const pending = nodeFetch.bufferedGet(new URL(server.url), {}, controller.signal)
    await eventually(() => server.requests.length === 1)
    await new Promise((resolve) => setTimeout(resolve, 20))
    const reason = new Error('stop')
    controller.abort(reason)
    await expect(pending).rejects.toBe(reason)
    await eventually(() => server.open() === 0)
  })

  it('an aborted signal rejects at once, with nothing sent', async () => {
    const { server, nodeFetch } = await setup((_request, response) => response.end())
    const reason = new Error('already')
    await expect(nodeFetch.bufferedGet(new URL(server.url), {}, AbortSignal.abort(reason))).rejects.toBe(
      reason,
    )
    expect(server.accepted()).toBe(0)
  })

  it('a connection cut in the middle of the body is a TypeError "fetch failed", not a short body', async () => {
    const { server, nodeFetch } = await setup((request, response) => {
      response.writeHead(200, { 'content-length': '100' })
      response.write('only part of it')
      setTimeout(() => request.socket.destroy(), 10)
    })
    const failure = await nodeFetch.bufferedGet(new URL(server.url), {}, noSignal()).catch((error) => error)
    expect(failure).toBeInstanceOf(TypeError)
    expect(failure.message).toBe('fetch failed')
  })

  it('no server: TypeError "fetch failed" with the cause; another protocol is refused', async () => {
    const { server, nodeFetch } = await setup(() => undefined)
    const url = new URL(server.url)
    await server.close()
    const failure = await nodeFetch.bufferedGet(url, {}, noSignal()).catch((error) => error)
    expect(failure).toBeInstanceOf(TypeError)
    expect(failure.cause).toBeDefined()
    await expect(nodeFetch.bufferedGet(new URL('file:///etc/passwd'), {}, noSignal())).rejects.toThrow(
      'fetch failed',
    )
  })

  it('decodes gzip and br bodies; a corrupt one fails', async () => {
    const text = 'hello '.repeat(100)
    const { server, nodeFetch } = await setup((request, response) => {
      if (request.url === '/gzip') {
        response.writeHead(200, { 'content-encoding': 'gzip' })
        response.end(zlib.gzipSync(text))
      } else if (request.url === '/br') {
        response.writeHead(200, { 'content-encoding': 'br' })
        response.end(zlib.brotliCompressSync(text))
      } else {
        response.writeHead(200, { 'content-encoding': 'gzip' })
        response.end('not gzip at all')
      }
    })
    for (const path of ['/gzip', '/br'])
      expect((await nodeFetch.bufferedGet(new URL(server.url + path), {}, noSignal())).body.toString()).toBe(
        text,
      )
    await expect(nodeFetch.bufferedGet(new URL(`${server.url}/bad`), {}, noSignal())).rejects.toThrow(
      'fetch failed',
    )
  })
})

describe("the client's reads over bufferedGet", () => {
  const session = { id: 'ses_1', title: 't', time: { created: 1, updated: 2 } }

  async function client(handler: http.RequestListener, options: { timeoutMs?: number } = {}) {
    const server = await serve(handler)
    const upstream = createUpstreamClient({
      baseUrl: server.url,
      username: 'gw',
      password: 'secret-pw',
      directory: '/work/space ü',
      ...options,
    })
    cleanups.push(
      () => server.close(),
      () => upstream.close(),
    )
    return { server, upstream }
  }

  it('pin the directory (query and header) and send the Basic header, whatever the path holds', async () => {
    const { server, upstream } = await client((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(session))
    })
    expect(await upstream.getSession('ses_1?directory=/etc#x')).toEqual(session)
    const request = server.requests[0] as http.IncomingMessage
    const url = new URL(request.url ?? '', 'http://x')
    expect(url.pathname).toBe(`/session/${encodeURIComponent('ses_1?directory=/etc#x')}`)
    expect(url.searchParams.getAll('directory')).toEqual(['/work/space ü'])
    expect(request.headers['x-opencode-directory']).toBe(encodeURIComponent('/work/space ü'))
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('gw:secret-pw').toString('base64')}`)
  })

  it('listMessages passes limit and before and returns the next cursor', async () => {
    const { server, upstream } = await client((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'x-next-cursor': 'cur_2' })
      response.end('[]')
    })
    expect(await upstream.listMessages('ses_1', { limit: 5, before: 'cur_1' })).toEqual({
      messages: [],
      nextCursor: 'cur_2',
    })
    const url = new URL(server.requests[0]?.url ?? '', 'http://x')
    expect(url.pathname).toBe('/session/ses_1/message')
    expect(url.searchParams.get('limit')).toBe('5')
    expect(url.searchParams.get('before')).toBe('cur_1')
  })

  it('map 404, other statuses, bad JSON and bad shapes to UpstreamErrors, the credential redacted', async () => {
    const { upstream } = await client((request, response) => {
      const path = new URL(request.url ?? '', 'http://x').pathname
      if (path === '/session/gone') {
        response.writeHead(404, { 'content-type': 'application/json' })
        response.end('{"name":"NotFoundError"}')
      } else if (path === '/session/boom') {
        response.writeHead(500, { 'content-type': 'text/plain' })
        response.end(`failed with password secret-pw and ${request.headers.authorization}`)
      } else if (path === '/session/html') {
        response.writeHead(200, { 'content-type': 'text/html' })
        response.end('<html>secret-pw</html>')
      } else {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end('{"id":1}')
      }
    })
    const errorOf = (id: string) => upstream.getSession(id).catch((error: unknown) => error as UpstreamError)
    const gone = await errorOf('gone')
    expect(UpstreamError.isInstance(gone) && gone.code).toBe('ERR_UPSTREAM_NOT_FOUND')
    const boom = await errorOf('boom')
    expect(UpstreamError.isInstance(boom) && [boom.code, boom.status, boom.isRetryable]).toEqual([
      'ERR_UPSTREAM_HTTP',
      500,
      true,
    ])
    const html = await errorOf('html')
    expect(UpstreamError.isInstance(html) && html.code).toBe('ERR_UPSTREAM_SCHEMA')
    const shape = await errorOf('shape')
    expect(UpstreamError.isInstance(shape) && shape.code).toBe('ERR_UPSTREAM_SCHEMA')
    const token = Buffer.from('gw:secret-pw').toString('base64')
    for (const error of [gone, boom, html, shape]) {
      const seen = JSON.stringify({ ...(error as object), message: (error as Error).message })
      expect(seen).not.toContain('secret-pw')
      expect(seen).not.toContain(token)
    }
  })

  it('a body that stalls ends at the timeout; a cut read is tried once more', async () => {
    let calls = 0
    const { upstream } = await client(
      (request, response) => {
        calls++
        if (request.url?.startsWith('/session/stall')) {
          response.writeHead(200, { 'content-type': 'application/json' })
          response.write('{"id":')
          return
        }
        if (calls % 2 === 1) {
          request.socket.destroy()
          return
        }
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(JSON.stringify(session))
      },
      { timeoutMs: 200 },
    )
    expect(await upstream.getSession('ses_1')).toEqual(session)
    expect(calls).toBe(2)
    calls = 0
    const stalled = await upstream.getSession('stall').catch((error: unknown) => error as UpstreamError)
    expect(UpstreamError.isInstance(stalled) && stalled.code).toBe('ERR_UPSTREAM_TIMEOUT')
    // A read that got no whole answer is sent once more: two tries, each ended by the timeout.
    expect(calls).toBe(2)
  })

  it("the caller's abort rejects with its reason and is not retried", async () => {
    let calls = 0
    const { upstream } = await client(() => {
      calls++
    })
    const controller = new AbortController()
    const pending = upstream.sessionStatus({ signal: controller.signal })
    await eventually(() => calls === 1)
    const reason = new Error('left')
    controller.abort(reason)
    await expect(pending).rejects.toBe(reason)
    expect(calls).toBe(1)
  })
})
