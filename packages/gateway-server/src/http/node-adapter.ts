import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { GatewayLimits } from '../config.js'
import { AnswerStalled, BodyError, type GatewayApp, type RequestHead } from './app.js'

// Hop-by-hop headers are the connection's business, never the application's: a `Connection:
// keep-alive` from a streaming response would override Node's own decision to close a socket
// (after `maxRequestsPerSocket`, or after a refused request whose body was never read).
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection'])

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void

/**
 * Serves the app on `node:http` without reading a byte of the body before the app asks for it
 * (after the Origin and credential checks). Bodies are read with a size cap, a deadline and a
 * cap on how many are read at once. A request answered without its body being read has its
 * connection closed, so nobody can keep the server reading a body it refused.
 */
export function createNodeHandler(
  app: GatewayApp,
  limits: Pick<
    GatewayLimits,
    | 'maxRequestBodyBytes'
    | 'bodyTimeoutMs'
    | 'maxInFlightBodies'
    | 'maxInFlightBodiesPerCredential'
    | 'responseStallTimeoutMs'
    | 'maxStalledResponsesPerCredential'
  >,
  onError: (error: Error) => void,
): NodeHandler {
  let inFlightBodies = 0
  const inFlightByOwner = new Map<string, number>()
  const stalls = stallCounter(limits)
  return (req, res) => {
    const started = performance.now()
    const controller = new AbortController()
    // Whether the answer was delivered: its last byte handed to the connection ('finish'), and
    // that write did not fail. Node emits 'finish' for a last write into a connection the client
    // has reset (after a probe: see continueAfterFin) and reports the failure (EPIPE) only a
    // moment later, so the verdict waits for that moment (setImmediate runs after it).
    let delivered: (whole: boolean) => void = () => {}
    const delivery = new Promise<boolean>((resolve) => {
      delivered = resolve
    })
    const settleDelivery = (): void => {
      setImmediate(() => delivered(res.writableFinished && !req.socket.errored))
    }
    res.once('finish', settleDelivery)
    res.once('close', () => {
      if (!res.writableFinished) controller.abort()
      settleDelivery()
    })
    // The gateway drops a stalled answer: the request ends, and its audit lines say why.
    const stalled = (): void => controller.abort(new AnswerStalled())
    let head: RequestHead
    try {
      head = { method: req.method ?? 'GET', url: requestUrl(req), headers: requestHeaders(req) }
    } catch {
      res.shouldKeepAlive = false
      lingerOnClose(req.socket)
      res.writeHead(400, { 'Content-Type': 'application/json', Connection: 'close' })
      res.end(JSON.stringify({ error: 'bad request' }))
      return
    }
    let bodyState: 'unread' | 'reading' | 'read' = 'unread'
    // Whose request this is, once the app has authenticated it (it asks for the body then).
    let requester: string | undefined
    const readBody = (owner: string): Promise<Uint8Array> => {
      bodyState = 'reading'
      requester = owner
      // `Expect: 100-continue` is answered only now, after the checks (Node would otherwise
      // invite the body before anything was checked).
      if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue()
      return readNodeBody(req, limits, {
        enter: () => {
          const mine = inFlightByOwner.get(owner) ?? 0
          if (mine >= limits.maxInFlightBodiesPerCredential) return 'busy_credential'
          if (inFlightBodies >= limits.maxInFlightBodies) return 'busy'
          inFlightBodies++
          inFlightByOwner.set(owner, mine + 1)
          return undefined
        },
        leave: () => {
          inFlightBodies--
          const mine = (inFlightByOwner.get(owner) ?? 1) - 1
          if (mine === 0) inFlightByOwner.delete(owner)
          else inFlightByOwner.set(owner, mine)
        },
      }).then((body) => {
        bodyState = 'read'
        continueAfterFin(req, res)
        return body
      })
    }
    app.handle(head, readBody, controller.signal, started, delivery).then(
      (response) =>
        writeResponse(req, res, response, bodyState !== 'read' && hasBody(req), (wait) =>
          stalls.hold(requester, res, wait, stalled),
        ),
      (error: Error) => {
        onError(error)
        if (!res.headersSent) {
          res.shouldKeepAlive = false
          if (bodyState !== 'read') lingerOnClose(req.socket)
          res.writeHead(500, { 'Content-Type': 'application/json', Connection: 'close' })
        }
        res.end()
      },
    )
  }
}

/** How long a connection refused before its body was read stays open after the answer. */
const LINGER_MS = 2_000

/**
 * Closes a connection whose request body was not read without losing the answer (nginx's
 * "lingering close"). Node destroys such a socket as soon as the answer is written; closed with
 * the client's unread bytes in it, the socket sends a reset, and a reset makes the client's
 * network stack drop the answer it has not read yet, which a client still sending its body (or
 * one slowed by a busy machine) has not. Instead the gateway ends its side (the client reads the
 * answer, then end of stream) and destroys the socket when the client has closed, or after
 * LINGER_MS. Nothing more of the body is read.
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.writable) this.end()
    if (this.destroyed) return
    const timer = setTimeout(() => this.destroy(), LINGER_MS)
    timer.unref()
    this.once('close', () => clearTimeout(timer))
  }
}

/** The request's URL; the Host header is only used when it is a plain host[:port]. */
function requestUrl(req: IncomingMessage): URL {
  const host = req.headers.host
  const base =
    host && /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? host : 'localhost'
  const path = req.url ?? '/'
  if (!path.startsWith('/')) throw new TypeError('absolute-form request target')
  return new URL(`http://${base}${path}`)
}

function requestHeaders(req: IncomingMessage): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const v of value) headers.append(name, v)
    else headers.set(name, value)
  }
  return headers
}

const hasBody = (req: IncomingMessage): boolean =>
  !req.complete &&
  (req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0'))

/** Reads the whole body within the size cap and the deadline; rejects with a `BodyError`. */
function readNodeBody(
  req: IncomingMessage,
  limits: Pick<GatewayLimits, 'maxRequestBodyBytes' | 'bodyTimeoutMs'>,
  slot: { enter: () => 'busy' | 'busy_credential' | undefined; leave: () => void },
): Promise<Uint8Array> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN)
  if (declared > limits.maxRequestBodyBytes) return Promise.reject(new BodyError('too_large'))
  const refused = slot.enter()
  if (refused) return Promise.reject(new BodyError(refused))
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const finish = (error: BodyError | undefined): void => {
      clearTimeout(timer)
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onAbort)
      req.off('aborted', onAbort)
      slot.leave()
      if (error) {
        req.pause()
        reject(error)
      } else resolve(Buffer.concat(chunks))
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength
      if (size > limits.maxRequestBodyBytes) finish(new BodyError('too_large'))
      else chunks.push(chunk)
    }
    const onEnd = (): void => finish(undefined)
    const onAbort = (): void => finish(new BodyError('aborted'))
    const timer = setTimeout(() => finish(new BodyError('timeout')), limits.bodyTimeoutMs)
    req.on('data', onData)
    req.once('end', onEnd)
    req.once('error', onAbort)
    req.once('aborted', onAbort)
  })
}

/**
 * Bounds what clients that stop reading can make the gateway hold: a response whose socket buffer
 * is full must drain within `responseStallTimeoutMs`, and a credential may have at most
 * `maxStalledResponsesPerCredential` such responses at once; past either, the connection is
 * closed (its buffered answer freed), `dropping` called first. Requests answered before
 * authentication count as one owner.
 */
function stallCounter(
  limits: Pick<GatewayLimits, 'responseStallTimeoutMs' | 'maxStalledResponsesPerCredential'>,
): {
  hold(
    owner: string | undefined,
    res: ServerResponse,
    drained: Promise<void>,
    dropping: () => void,
  ): Promise<void>
} {
  const byOwner = new Map<string, number>()
  return {
    async hold(owner, res, drained, dropping) {
      const key = owner ?? ''
      const mine = byOwner.get(key) ?? 0
      if (mine >= limits.maxStalledResponsesPerCredential) {
        dropping()
        res.destroy()
        return
      }
      byOwner.set(key, mine + 1)
      let timer: ReturnType<typeof setTimeout> | undefined
      try {
        const stalled = new Promise<'stalled'>((resolve) => {
          timer = setTimeout(() => resolve('stalled'), limits.responseStallTimeoutMs)
        })
        if ((await Promise.race([drained, stalled])) === 'stalled') {
          dropping()
          res.destroy()
        }
      } finally {
        clearTimeout(timer)
        const left = (byOwner.get(key) ?? 1) - 1
        if (left === 0) byOwner.delete(key)
        else byOwner.set(key, left)
      }
    },
  }
}

/** Writes the web `Response`, streaming its body with backpressure; stops when the client goes. */
async function writeResponse(
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
  closeAfter: boolean,
  stall: (drained: Promise<void>) => Promise<void>,
): Promise<void> {
  const headers: Record<string, string | string[]> = {}
  response.headers.forEach((value, name) => {
    if (HOP_BY_HOP.has(name)) return
    if (name === 'set-cookie') return // never set by the gateway
    headers[name] = value
  })
  if (closeAfter) {
    // The body was never read (a refused request): answer, then close the connection instead
    // of reading (or waiting for) what the client still sends.
    // Node then ends the socket once the answer is written (lingering: see lingerOnClose).
    res.shouldKeepAlive = false
    headers.connection = 'close'
    lingerOnClose(req.socket)
  }
  if (response.statusText) res.writeHead(response.status, response.statusText, headers)
  else res.writeHead(response.status, headers)
  if (!response.body || req.method === 'HEAD') {
    await response.body?.cancel().catch(() => {})
    res.end()
    return
  }
  // An event stream's headers go out at once (the client sees the stream open before its first
  // event); any other answer's go out with its first bytes, in one write.
  const streaming = response.headers.get('content-type')?.includes('text/event-stream') === true
  if (streaming) res.flushHeaders()
  const reader = response.body.getReader()
  const stop = (): void => {
    void reader.cancel().catch(() => {})
  }
  res.once('close', stop)
  // Between two events: the writer waits for the next one, the last byte written ended a line.
  let idle = false
  let atLineStart = true
  const nextChunk = async (): Promise<Awaited<ReturnType<typeof reader.read>>> => {
    idle = atLineStart
    try {
      return await reader.read()
    } finally {
      idle = false
    }
  }
  const probe = streaming ? probeAfterFin(req, res, () => idle) : undefined
  let read = false
  try {
    let next = await nextChunk()
    for (;;) {
      if (next.done) {
        read = true
        break
      }
      const value = next.value
      if (!streaming) {
        // A whole answer in one chunk (a JSON answer is): headers, body and end in one write.
        next = await reader.read()
        if (next.done) {
          read = true
          if (!res.destroyed) res.end(value)
          break
        }
      }
      atLineStart = value[value.byteLength - 1] === 0x0a
      if (!res.write(value)) {
        if (res.destroyed) break
        // The client is not reading: wait for it, within the stall bounds.
        await stall(
          new Promise<void>((resolve) => {
            const go = (): void => {
              res.off('drain', go)
              res.off('close', go)
              resolve()
            }
            res.once('drain', go)
            res.once('close', go)
          }),
        )
      }
      if (res.destroyed) break
      if (streaming) next = await nextChunk()
    }
  } catch {
    // The body stream failed (the client went away, or the handler errored): end what we have.
  } finally {
    probe?.()
    res.off('close', stop)
    // Left before the end (the connection closed or was dropped): cancel the body, which ends
    // the handler's stream and writes the request's audit lines (`aborted` for every answer not
    // produced yet). The 'close' listener is gone by the time a destroyed socket emits it.
    if (!read) stop()
    res.end()
  }
}

/** How often an answer whose client sent FIN is probed while it waits (see below). */
const FIN_PROBE_MS = 250

/**
 * Finds out whether a client that sent FIN while its answer is being worked on (a waiting call,
 * before any byte of the answer) is still there. As for event streams (`probeAfterFin`), a FIN
 * alone cannot tell a client that half-closed and still reads from one that closed its socket,
 * and an answer written into the closed one's reset can still count as written. Before the
 * answer's head, the only thing that may be written is an interim response: `100 Continue`,
 * which HTTP/1.1 clients skip (RFC 9110 §15.2) — written after the FIN and every FIN_PROBE_MS
 * until the head goes out. To a client that is gone the second write fails: the connection
 * closes, the request's signal aborts, and its audit lines say `aborted`.
 */
function continueAfterFin(req: IncomingMessage, res: ServerResponse): void {
  // HTTP/1.0 has no interim responses: such a client is not probed.
  if (req.httpVersionMajor < 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor < 1)) return
  const socket = req.socket
  let timer: ReturnType<typeof setInterval> | undefined
  const stop = (): void => {
    socket.off('end', start)
    res.off('close', stop)
    clearInterval(timer)
  }
  const probe = (): void => {
    if (res.headersSent || res.destroyed || res.writableEnded) stop()
    else res.writeContinue()
  }
  function start(): void {
    probe()
    if (res.headersSent || res.destroyed) return
    timer = setInterval(probe, FIN_PROBE_MS)
    timer.unref()
  }
  res.once('close', stop)
  if (socket.readableEnded) start()
  else socket.once('end', start)
}

/**
 * Finds out whether a client that sent FIN during an event stream is still there. A FIN alone
 * says only that the client sends nothing more: one that half-closed after its request still
 * reads the answer (the server allows half-open connections for it), one that closed its socket
 * (an aborted fetch, a closed python socket) is gone, and nothing tells the two apart until the
 * gateway writes: the closed one answers with a reset, and the next write fails, which closes the
 * connection (the request's signal aborts, the wait stops, its audit line says `aborted`).
 * Without probing, a long wait runs to its end and its answer, written into the reset, may
 * still count as written. So while such a stream waits for its next event (`idle`, only ever
 * between lines), an SSE comment line (`:`, ignored by every reader) is written now and every
 * FIN_PROBE_MS. Returns the stop function.
 */
function probeAfterFin(req: IncomingMessage, res: ServerResponse, idle: () => boolean): () => void {
  const socket = req.socket
  let timer: ReturnType<typeof setInterval> | undefined
  const probe = (): void => {
    if (idle() && !res.destroyed && !res.writableEnded) res.write(':\n')
  }
  const start = (): void => {
    probe()
    timer = setInterval(probe, FIN_PROBE_MS)
    timer.unref()
  }
  if (socket.readableEnded) start()
  else socket.once('end', start)
  return () => {
    socket.off('end', start)
    clearInterval(timer)
  }
}
