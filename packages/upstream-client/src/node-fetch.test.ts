import { getEventListeners, once } from 'node:events'
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import zlib from 'node:zlib'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { createUpstreamClient } from './client.ts'
import { UpstreamError } from './errors.ts'
import { createInvokeGet } from './invoke.ts'
import { createNodeFetch, type NodeFetch } from './node-fetch.ts'
import { createRedactor } from './redact.ts'

// The client's default fetch over node:http, against a real loopback server: what the runtime
// client relies on (streaming, aborts, errors, decoding, a bounded keep-alive pool); its buffered
// GET, which the client's reads use; and the client's reads over it (pinning, errors, timeouts,
// retries and redaction as for the SDK's calls).

interface Server {
  readonly url: string
  /** Connections accepted so far, and those still open. */
  readonly accepted: () => number
  readonly open: () => number
  /** The requests received, in order. */
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

/** Polls `check` every 10 ms until it holds, failing after `ms`. */
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

describe('createNodeFetch', () => {
  it('sends the method, headers and body of a Request, and answers status, headers and body', async () => {
    const seen: { method?: string; header?: string; length?: string; body?: string } = {}
    const { server, nodeFetch } = await setup((request, response) => {
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('end', () => {
        Object.assign(seen, {
          method: request.method,
          header: request.headers['x-probe'],
          length: request.headers['content-length'],
          body,
        })
        response.writeHead(201, 'Made It', { 'content-type': 'application/json', 'x-answer': 'yes' })
        response.end('{"ok":true}')
      })
    })
    const answer = await nodeFetch(
      new Request(`${server.url}/session?x=1`, {
        method: 'POST',
        headers: { 'x-probe': 'p', 'content-type': 'application/json' },
        body: '{"a":"é"}',
      }),
    )
    expect(answer.status).toBe(201)
    expect(answer.statusText).toBe('Made It')
    expect(answer.ok).toBe(true)
    expect(answer.headers.get('x-answer')).toBe('yes')
    expect(await answer.json()).toEqual({ ok: true })
    expect(seen).toEqual({
      method: 'POST',
      header: 'p',
      length: String(Buffer.byteLength('{"a":"é"}')),
      body: '{"a":"é"}',
    })
  })

  it('takes a URL and init as fetch does', async () => {
    const { server, nodeFetch } = await setup((request, response) => response.end(request.url))
    expect(await (await nodeFetch(`${server.url}/a?b=c`)).text()).toBe('/a?b=c')
    expect(await (await nodeFetch(new URL(`${server.url}/d`), { method: 'DELETE' })).text()).toBe('/d')
  })

  it('streams the body as it arrives, through silences longer than the idle timeout', async () => {
    let next: (() => void) | undefined
    const { server, nodeFetch } = await setup(
      async (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' })
        for (const word of ['one', 'two', 'three']) {
          response.write(`data: ${word}\n\n`)
          // The next chunk is written only once the client has read this one.
          await new Promise<void>((resolve) => (next = resolve))
        }
        response.end()
      },
      { idleTimeoutMs: 20 },
    )
    const answer = await nodeFetch(`${server.url}/event`)
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    const read: string[] = []
    for (;;) {
      const chunk = await reader.read()
      if (chunk.done) break
      read.push(decoder.decode(chunk.value))
      // Quiet for ten idle timeouts before the server may write again.
      await new Promise((resolve) => setTimeout(resolve, 200))
      next?.()
    }
    expect(read.join('')).toBe('data: one\n\ndata: two\n\ndata: three\n\n')
  })

  it('an abort before the answer rejects with the reason and closes the connection', async () => {
    const { server, nodeFetch } = await setup(() => {
      // Never answers.
    })
    const controller = new AbortController()
    const request = new Request(`${server.url}/slow`, { signal: controller.signal })
    const pending = nodeFetch(request)
    await eventually(() => server.open() === 1)
    const reason = new Error('caller gave up')
    controller.abort(reason)
    await expect(pending).rejects.toBe(reason)
    await eventually(() => server.open() === 0)
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(0)
  })

  it('an abort after the answer errors its body and closes the connection', async () => {
    const { server, nodeFetch } = await setup((_request, response) => {
      response.writeHead(200)
      response.write('partial')
    })
    const controller = new AbortController()
    const request = new Request(`${server.url}/half`, { signal: controller.signal })
    const answer = await nodeFetch(request)
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('partial')
    controller.abort(new Error('stop'))
    await expect(reader.read()).rejects.toThrow('stop')
    await eventually(() => server.open() === 0)
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(0)
  })

  it('an aborted signal rejects at once, with nothing sent', async () => {
    const { server, nodeFetch } = await setup((_request, response) => response.end())
    const reason = new Error('already')
    await expect(nodeFetch(server.url, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
    expect(server.accepted()).toBe(0)
  })

  it('leaves no listener on the request signal once the answer is read', async () => {
    const { server, nodeFetch } = await setup((_request, response) => response.end('x'))
    const controller = new AbortController()
    for (let i = 0; i < 20; i++) {
      const request = new Request(server.url, { signal: controller.signal })
      const answer = await nodeFetch(request)
      expect(getEventListeners(request.signal, 'abort')).toHaveLength(1)
      await answer.text()
      await eventually(() => getEventListeners(request.signal, 'abort').length === 0)
    }
  })

  it('a cancelled body closes its connection', async () => {
    const { server, nodeFetch } = await setup((_request, response) => {
      response.writeHead(200)
      response.write('first')
    })
    const answer = await nodeFetch(server.url)
    await eventually(() => server.open() === 1)
    await answer.body?.cancel()
    await eventually(() => server.open() === 0)
  })

  it('no answer: TypeError "fetch failed" with the cause, as fetch does', async () => {
    const { server, nodeFetch } = await setup((_request, response) => response.end())
    const url = server.url
    await server.close()
    const error = await nodeFetch(url).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TypeError)
    expect((error as TypeError).message).toBe('fetch failed')
    expect(((error as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED')
  })

  it('a connection reset before the answer is a TypeError too', async () => {
    const { server, nodeFetch } = await setup((request) => request.socket.destroy())
    await expect(nodeFetch(server.url)).rejects.toThrow(TypeError)
  })

  it('a status Response cannot hold is a TypeError, not a crash', async () => {
    const { server, nodeFetch } = await setup((request) => {
      request.socket.end('HTTP/1.1 999 Odd\r\ncontent-length: 0\r\n\r\n')
    })
    await expect(nodeFetch(server.url)).rejects.toThrow('fetch failed')
  })

  it('decodes gzip, deflate and br bodies, keeping the header', async () => {
    const { server, nodeFetch } = await setup((request, response) => {
      const coding = request.url?.slice(1) ?? ''
      const body = Buffer.from('{"big":"' + 'z'.repeat(10_000) + '"}')
      const encoded =
        coding === 'gzip'
          ? zlib.gzipSync(body)
          : coding === 'deflate'
            ? zlib.deflateSync(body)
            : zlib.brotliCompressSync(body)
      response.writeHead(200, { 'content-encoding': coding, 'content-length': encoded.length })
      response.end(encoded)
    })
    for (const coding of ['gzip', 'deflate', 'br']) {
      const answer = await nodeFetch(`${server.url}/${coding}`)
      expect(answer.headers.get('content-encoding')).toBe(coding)
      expect(((await answer.json()) as { big: string }).big).toHaveLength(10_000)
    }
  })

  it('a corrupt compressed body errors the body', async () => {
    const { server, nodeFetch } = await setup((_request, response) => {
      const good = zlib.gzipSync('hello')
      response.writeHead(200, { 'content-encoding': 'gzip' })
      response.end(Buffer.concat([good.subarray(0, 10), Buffer.from('garbage-garbage')]))
    })
    const answer = await nodeFetch(server.url)
    await expect(answer.text()).rejects.toThrow()
  })

  it('204 and HEAD answers have no body', async () => {
    const { server, nodeFetch } = await setup((request, response) => {
      response.writeHead(request.method === 'HEAD' ? 200 : 204, {
        'content-length': request.method === 'HEAD' ? 5 : 0,
      })
      response.end()
    })
    const empty = await nodeFetch(server.url, { method: 'POST' })
    expect(empty.status).toBe(204)
    expect(empty.body).toBeNull()
    const head = await nodeFetch(server.url, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.body).toBeNull()
  })

  it('keeps connections alive and reuses them', async () => {
    const { server, nodeFetch } = await setup((_request, response) => response.end('x'))
    for (let i = 0; i < 30; i++) expect(await (await nodeFetch(server.url)).text()).toBe('x')
    expect(server.accepted()).toBe(1)
  })

  it('opens at most maxSockets connections to an origin; more requests wait their turn', async () => {
    const { server, nodeFetch } = await setup(
      (_request, response) => setTimeout(() => response.end('x'), 20),
      { maxSockets: 3 },
    )
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => nodeFetch(server.url).then((r) => r.text())),
    )
    expect(answers).toEqual(Array(24).fill('x'))
    expect(server.accepted()).toBe(3)
  })

  it('closes an idle connection after idleTimeoutMs, and close() closes the rest', async () => {
    const { server, nodeFetch } = await setup((_request, response) => response.end('x'), {
      idleTimeoutMs: 50,
    })
    await (await nodeFetch(server.url)).text()
    await eventually(() => server.open() === 0)
    await (await nodeFetch(server.url)).text()
    expect(server.open()).toBe(1)
    nodeFetch.close()
    await eventually(() => server.open() === 0)
  })

  it('close() leaves an answer that is still streaming alone', async () => {
    let finish: (() => void) | undefined
    const { server, nodeFetch } = await setup((_request, response) => {
      response.writeHead(200)
      response.write('a')
      finish = () => response.end('b')
    })
    const answer = await nodeFetch(server.url)
    nodeFetch.close()
    finish?.()
    expect(await answer.text()).toBe('ab')
  })

  it('refuses other protocols and bad options', async () => {
    const nodeFetch = createNodeFetch()
    cleanups.push(() => nodeFetch.close())
    await expect(nodeFetch('file:///etc/passwd')).rejects.toThrow('fetch failed')
    expect(() => createNodeFetch({ maxSockets: 0 })).toThrow(RangeError)
    expect(() => createNodeFetch({ idleTimeoutMs: 1.5 })).toThrow(RangeError)
  })
})

describe("the client's default fetch", () => {
  it('is node:http, never the global fetch, and the client closes its idle connections', async () => {
    const { server } = await setup((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end('{}')
    })
    const globalFetch = vi.spyOn(globalThis, 'fetch')
    try {
      const client = createUpstreamClient({ baseUrl: server.url, password: 'pw', directory: '/work' })
      expect(await client.sessionStatus()).toEqual({})
      expect(await client.sessionStatus()).toEqual({})
      expect(server.accepted()).toBe(1)
      expect(server.open()).toBe(1)
      client.close()
      await eventually(() => server.open() === 0)
      expect(globalFetch).not.toHaveBeenCalled()
    } finally {
      globalFetch.mockRestore()
    }
  })
})

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

  it('an encoding named like an object member (constructor, __proto__) is not decoded and crashes nothing', async () => {
    const { server, nodeFetch } = await setup((request, response) => {
      response.writeHead(200, { 'content-encoding': request.url?.slice(1) ?? '' })
      response.end('{"plain":true}')
    })
    const crashes: unknown[] = []
    const onCrash = (error: unknown): void => {
      crashes.push(error)
    }
    process.on('uncaughtException', onCrash)
    try {
      for (const coding of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const url = new URL(`${server.url}/${coding}`)
        expect((await nodeFetch.bufferedGet(url, {}, noSignal())).body.toString(), coding).toBe(
          '{"plain":true}',
        )
        expect(await (await nodeFetch(url)).text(), coding).toBe('{"plain":true}')
      }
    } finally {
      process.off('uncaughtException', onCrash)
    }
    expect(crashes).toEqual([])
  })

  it('an answer over maxAnswerBytes once decoded fails and closes its connection; one at the limit is read', async () => {
    const limit = 64 * 1024
    const { server, nodeFetch } = await setup(
      (request, response) => {
        if (request.url === '/bomb') {
          // 16 MiB of zeros in a few KiB of gzip.
          response.writeHead(200, { 'content-encoding': 'gzip' })
          response.end(zlib.gzipSync(Buffer.alloc(16 * 1024 * 1024)))
        } else if (request.url === '/big') {
          response.writeHead(200)
          response.end(Buffer.alloc(limit + 1, 'a'))
        } else {
          response.writeHead(200)
          response.end(Buffer.alloc(limit, 'a'))
        }
      },
      { maxAnswerBytes: limit },
    )
    for (const path of ['/bomb', '/big']) {
      const failure = await nodeFetch.bufferedGet(new URL(server.url + path), {}, noSignal()).catch((e) => e)
      expect(failure, path).toBeInstanceOf(TypeError)
      expect(failure.cause, path).toBeInstanceOf(RangeError)
    }
    await eventually(() => server.open() === 0)
    expect((await nodeFetch.bufferedGet(new URL(`${server.url}/fits`), {}, noSignal())).body.byteLength).toBe(
      limit,
    )
    expect(() => createNodeFetch({ maxAnswerBytes: 0 })).toThrow(RangeError)
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

  it('refuse an id that would name another route (dot segments), sending nothing', async () => {
    const { server, upstream } = await client((_request, response) => response.end('{}'))
    for (const id of ['..', '.'])
      await expect(upstream.getSession(id), id).rejects.toThrow('not a plain segment')
    await expect(upstream.listMessages('..')).rejects.toThrow('not a plain segment')
    await expect(upstream.getMessage('ses_1', '..')).rejects.toThrow('not a plain segment')
    expect(server.requests).toHaveLength(0)
    // An id that is not well-formed UTF-16 cannot be encoded: the read rejects (it does not throw).
    const reads = [
      () => upstream.getSession('\uD800'),
      () => upstream.listChildren('\uD800'),
      () => upstream.todos('\uD800'),
      () => upstream.getMessage('ses_1', '\uD800'),
      () => upstream.messageDiff('\uD800', 'msg_1'),
      () => upstream.listMessages('\uD800'),
    ]
    for (const read of reads) {
      let outcome: Promise<unknown> | undefined
      expect(() => {
        outcome = read()
      }).not.toThrow()
      await expect(outcome).rejects.toThrow(URIError)
    }
    expect(server.requests).toHaveLength(0)
    // Percent signs are encoded: an id spelling an encoded dot is one plain segment.
    await upstream.getSession('%2e%2E').catch(() => undefined)
    expect(new URL(server.requests[0]?.url ?? '', 'http://x').pathname).toBe('/session/%252e%252E')
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

  /** A client over a fetch of another make (not the node:http one), to no server. */
  const clientOver = (fetch: unknown, options: { timeoutMs?: number; maxConcurrentRequests: number }) =>
    createUpstreamClient({
      baseUrl: 'http://127.0.0.1:9',
      password: 'pw',
      directory: '/w',
      fetch: fetch as typeof globalThis.fetch,
      ...options,
    })

  it('a fetch whose reads ignore the signal still ends at the timeout, and frees its slot', async () => {
    // A fetch of another make, with and without bufferedGet, whose answers never come.
    let calls = 0
    const never = () => {
      calls++
      return new Promise<never>(() => {})
    }
    const plain = async () => {
      calls++
      return new Response(new ReadableStream({ start() {} }))
    }
    const buffering = Object.assign(async () => never(), { bufferedGet: never })
    for (const [name, fetch] of [
      ['fetch', plain],
      ['bufferedGet', buffering],
    ] as const) {
      calls = 0
      const upstream = clientOver(fetch, { timeoutMs: 100, maxConcurrentRequests: 1 })
      const first = await upstream.sessionStatus().catch((error: unknown) => error as UpstreamError)
      expect(UpstreamError.isInstance(first) && first.code, name).toBe('ERR_UPSTREAM_TIMEOUT')
      // The one slot is free again: the next read is sent and times out too.
      const second = await upstream.sessionStatus().catch((error: unknown) => error as UpstreamError)
      expect(UpstreamError.isInstance(second) && second.code, name).toBe('ERR_UPSTREAM_TIMEOUT')
      // Each read was sent twice (a read with no answer is tried once more): none waited for a slot.
      expect(calls, name).toBe(4)
      upstream.close()
    }
  })

  it('a transport whose get ignores the signal still ends at the timeout', async () => {
    let calls = 0
    const invokeGet = createInvokeGet(
      () => {
        calls++
        return new Promise<never>(() => {})
      },
      createRedactor('gw', 'pw', 'token'),
      50,
    )
    const failure = await invokeGet('session.status', z.object({}), '/session/status', {}).catch(
      (error: unknown) => error as UpstreamError,
    )
    expect(UpstreamError.isInstance(failure) && failure.code).toBe('ERR_UPSTREAM_TIMEOUT')
    expect(calls).toBe(2)
  })

  it('keep to maxConcurrentRequests through bufferedGet', async () => {
    let inFlight = 0
    let most = 0
    const releases: (() => void)[] = []
    const bufferedGet = () => {
      inFlight++
      most = Math.max(most, inFlight)
      return new Promise<{ status: number; headers: Record<string, string>; body: Buffer }>((resolve) =>
        releases.push(() => {
          inFlight--
          resolve({ status: 200, headers: {}, body: Buffer.from('{}') })
        }),
      )
    }
    const fetch = Object.assign(async () => new Response('{}'), { bufferedGet })
    const upstream = clientOver(fetch, { maxConcurrentRequests: 2 })
    cleanups.push(() => upstream.close())
    const reads = Array.from({ length: 6 }, () => upstream.sessionStatus())
    for (let answered = 0; answered < 6; answered++) {
      await eventually(() => releases.length > 0)
      expect(inFlight).toBeLessThanOrEqual(2)
      releases.shift()?.()
    }
    expect(await Promise.all(reads)).toEqual(Array.from({ length: 6 }, () => ({})))
    expect(most).toBe(2)
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
