import http from 'node:http'
import https from 'node:https'
import { Readable } from 'node:stream'
import zlib from 'node:zlib'

/** What {@link createNodeFetch} takes. */
export interface NodeFetchOptions {
  /**
   * Most connections open to one origin at once (default 64); more requests wait for one to free
   * up. The client's own bound (`maxConcurrentRequests`) is usually the tighter one; this is the
   * pool's backstop, with room for the event stream.
   */
  readonly maxSockets?: number
  /**
   * An idle kept-alive connection is closed after this long (default 4 000 ms), before the
   * runtime closes it itself (a request sent on a connection the server is closing fails).
   */
  readonly idleTimeoutMs?: number
  /**
   * Most bytes a {@link BufferedGet} answer may hold once decoded (default 128 MiB): past it the
   * read fails (`TypeError('fetch failed')` whose cause is a `RangeError`) and its connection is
   * closed, so neither a runaway answer nor a compressed bomb can take the process's memory.
   */
  readonly maxAnswerBytes?: number
}

/** A whole answer to a GET, its body read to the end (and decoded). */
export interface BufferedAnswer {
  readonly status: number
  /** Header names in lower case, as `node:http` gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: Buffer
}

/**
 * A GET whose answer is read whole before it resolves, without a `Request`, a `Response` or a
 * web stream in between: the runtime client's reads (one session, its messages, the statuses)
 * cost about half the CPU they cost through `fetch`. The same pool as the fetch it belongs to.
 *
 * `signal` aborts the request or the body (the promise rejects with its reason); a failure before
 * or during the answer rejects with `TypeError('fetch failed', { cause })`.
 */
export type BufferedGet = (
  url: URL,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal,
) => Promise<BufferedAnswer>

/** A `fetch` that can also read a GET whole (see {@link BufferedGet}); the client uses it when present. */
export type BufferingFetch = typeof fetch & { readonly bufferedGet: BufferedGet }

/** Whether `fetch` offers {@link BufferedGet}. */
export const canBuffer = (candidate: typeof fetch): candidate is BufferingFetch =>
  typeof (candidate as Partial<BufferingFetch>).bufferedGet === 'function'

/** A `fetch` over `node:http`, and the means to close its idle connections. */
export type NodeFetch = BufferingFetch & {
  /**
   * Closes the idle kept-alive connections. Answers still streaming are not cut; their
   * connections stay in the pool when they end, unreferenced, and close after the idle timeout.
   */
  readonly close: () => void
}

const DECODERS: ReadonlyMap<string, () => NodeJS.ReadWriteStream> = new Map([
  ['gzip', () => zlib.createGunzip()],
  ['x-gzip', () => zlib.createGunzip()],
  ['deflate', () => zlib.createInflate()],
  ['br', () => zlib.createBrotliDecompress()],
])

/**
 * The decoder of a `Content-Encoding`, or `undefined` for none or one we do not decode. A map, so
 * that a header such as `constructor` or `__proto__` names nothing (a plain object's lookup would
 * find its prototype's members).
 */
const decoderOf = (header: string | undefined): (() => NodeJS.ReadWriteStream) | undefined =>
  header === undefined ? undefined : DECODERS.get(header.trim().toLowerCase())

/**
 * A `fetch` for the runtime's HTTP API over `node:http`, the client's default. Node's own `fetch`
 * (undici) loads its whole client and compiles its HTTP parser to WebAssembly on first use: about
 * 10 MiB of memory a process then keeps for good, which for `sallyport up` was an eighth of its
 * idle RSS. This gives the runtime client what it uses of `fetch`, and no more:
 * - the method, headers and body of a `Request` (the body is read whole first: the runtime's
 *   request bodies are small JSON documents);
 * - the answer as a `Response` whose body streams as it arrives (the event stream);
 * - the request's signal aborts the request, and the body once the answer has started; the
 *   promise rejects with the signal's reason;
 * - a failure before an answer rejects with `TypeError('fetch failed', { cause })`, as fetch does;
 * - gzip, deflate and brotli bodies are decoded (the header stays, as with fetch);
 * - redirects are not followed: a 3xx is the answer (the runtime sends none);
 * - connections are kept alive in one pool per origin (see {@link NodeFetchOptions}).
 *
 * @example
 * const client = createUpstreamClient({ baseUrl, password, directory, fetch: createNodeFetch() })
 */
export function createNodeFetch(options: NodeFetchOptions = {}): NodeFetch {
  const maxSockets = options.maxSockets ?? 64
  const idleTimeoutMs = options.idleTimeoutMs ?? 4_000
  const maxAnswerBytes = options.maxAnswerBytes ?? 128 * 1024 * 1024
  if (!Number.isInteger(maxSockets) || maxSockets < 1)
    throw new RangeError('maxSockets must be a positive integer')
  if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 1)
    throw new RangeError('idleTimeoutMs must be a positive integer')
  if (!Number.isSafeInteger(maxAnswerBytes) || maxAnswerBytes < 1)
    throw new RangeError('maxAnswerBytes must be a positive integer')
  // `timeout` applies to idle sockets only: the agent destroys a free socket that times out; on
  // a socket in use the request merely emits 'timeout', which nothing here listens to (each call
  // has its own deadline, and the event stream its heartbeat watch).
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets, timeout: idleTimeoutMs, scheduling: 'lifo' }),
    'https:': new https.Agent({ keepAlive: true, maxSockets, timeout: idleTimeoutMs, scheduling: 'lifo' }),
  }
  const nodeFetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request && init === undefined ? input : new Request(input, init)
    const { signal } = request
    signal.throwIfAborted()
    const url = new URL(request.url)
    const protocol = url.protocol === 'http:' || url.protocol === 'https:' ? url.protocol : undefined
    if (protocol === undefined)
      throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) })
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer())
    signal.throwIfAborted()
    const headers: Record<string, string> = {}
    for (const [name, value] of request.headers) headers[name] = value
    if (body !== undefined) headers['content-length'] = String(body.length)
    else if (!['GET', 'HEAD'].includes(request.method)) headers['content-length'] = '0'
    const send = protocol === 'http:' ? http.request : https.request
    return new Promise<Response>((resolve, reject) => {
      let answered = false
      let response: http.IncomingMessage | undefined
      const onAbort = (): void => {
        const reason: unknown = signal.reason
        // Before the answer: the promise rejects; after it: the body stream errors.
        if (!answered) reject(reason)
        const error =
          reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError')
        if (response) response.destroy(error)
        outgoing.destroy(error)
      }
      const release = (): void => signal.removeEventListener('abort', onAbort)
      const outgoing = send(url, { method: request.method, headers, agent: agents[protocol] }, (incoming) => {
        response = incoming
        answered = true
        incoming.once('close', release)
        let answer: Response
        try {
          answer = toResponse(request, incoming)
        } catch (error) {
          release()
          incoming.destroy()
          reject(new TypeError('fetch failed', { cause: error }))
          return
        }
        resolve(answer)
      })
      outgoing.once('error', (error) => {
        if (answered) return
        release()
        reject(signal.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }))
      })
      signal.addEventListener('abort', onAbort, { once: true })
      outgoing.end(body)
    })
  }
  const bufferedGet: BufferedGet = (url, headers, signal) => {
    if (signal.aborted) return Promise.reject(signal.reason)
    const protocol = url.protocol === 'http:' || url.protocol === 'https:' ? url.protocol : undefined
    if (protocol === undefined)
      return Promise.reject(
        new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) }),
      )
    const send = protocol === 'http:' ? http.request : https.request
    return new Promise<BufferedAnswer>((resolve, reject) => {
      let settled = false
      const settle = (done: () => void): void => {
        if (settled) return
        settled = true
        signal.removeEventListener('abort', onAbort)
        done()
      }
      const failed = (error: unknown): void =>
        settle(() => reject(signal.aborted ? signal.reason : new TypeError('fetch failed', { cause: error })))
      const onAbort = (): void => {
        const reason: unknown = signal.reason
        settle(() => reject(reason))
        outgoing.destroy(
          reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError'),
        )
      }
      const outgoing = send(url, { method: 'GET', headers, agent: agents[protocol] }, (incoming) => {
        try {
          readWhole(incoming)
        } catch (error) {
          // Whatever the answer makes throw here fails this read, never the process.
          incoming.destroy()
          failed(error)
        }
      })
      const readWhole = (incoming: http.IncomingMessage): void => {
        const decoder = decoderOf(incoming.headers['content-encoding'])
        let source: Readable = incoming
        if (decoder) {
          const decoded = decoder() as unknown as Readable
          incoming.once('error', (error) => decoded.destroy(error))
          source = incoming.pipe(decoded as unknown as NodeJS.WritableStream) as unknown as Readable
        }
        const chunks: Buffer[] = []
        let bytes = 0
        source.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength
          if (bytes <= maxAnswerBytes) chunks.push(chunk)
          else if (!settled) {
            chunks.length = 0
            failed(new RangeError(`the answer is over ${maxAnswerBytes} bytes`))
            source.destroy()
            incoming.destroy()
          }
        })
        source.once('error', (error) => {
          incoming.destroy()
          failed(error)
        })
        // A connection closed before the body's end is a failure, not a short body.
        incoming.once('close', () => {
          if (!incoming.complete) failed(new Error('the connection closed before the answer ended'))
        })
        source.once('end', () =>
          settle(() =>
            resolve({
              status: incoming.statusCode ?? 0,
              headers: incoming.headers,
              body: Buffer.concat(chunks),
            }),
          ),
        )
      }
      outgoing.once('error', failed)
      signal.addEventListener('abort', onAbort, { once: true })
      outgoing.end()
    })
  }
  // Only the idle connections: `Agent.destroy()` would also cut the answers still streaming.
  const close = (): void => {
    for (const agent of Object.values(agents))
      for (const sockets of Object.values(agent.freeSockets))
        for (const socket of sockets ?? []) socket.destroy()
  }
  return Object.assign(nodeFetch, { close, bufferedGet })
}

/** A reason phrase `Response` accepts. */
const REASON = /^[\t\x20-\x7e\x80-\xff]*$/

/** Statuses whose answer has no body, whatever the server sends. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/** The `Response` of one answer; throws when the answer cannot be one (a status out of range). */
function toResponse(request: Request, incoming: http.IncomingMessage): Response {
  const status = incoming.statusCode ?? 0
  const headers = new Headers()
  for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2) {
    const name = incoming.rawHeaders[i] as string
    const value = incoming.rawHeaders[i + 1] as string
    try {
      headers.append(name, value)
    } catch {
      // A header value fetch would refuse (a stray control character) is left out, not fatal.
    }
  }
  if (request.method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
    incoming.resume()
    return new Response(null, {
      status,
      statusText: REASON.test(incoming.statusMessage ?? '') ? incoming.statusMessage : '',
      headers,
    })
  }
  const decoder = decoderOf(incoming.headers['content-encoding'])
  let source: Readable = incoming
  if (decoder) {
    const decoded = decoder()
    incoming.once('error', (error) => (decoded as unknown as Readable).destroy(error))
    ;(decoded as unknown as Readable).once('close', () => incoming.destroy())
    source = incoming.pipe(decoded) as unknown as Readable
  }
  const statusText = incoming.statusMessage ?? ''
  return new Response(Readable.toWeb(source) as ReadableStream<Uint8Array>, {
    status,
    // A reason phrase fetch would refuse is dropped, not fatal.
    statusText: REASON.test(statusText) ? statusText : '',
    headers,
  })
}
