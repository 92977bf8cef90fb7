import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { GatewayLimits } from '../config.js'
import type { GatewayApp } from './app.js'
import { createNodeHandler } from './node-adapter.js'

export interface ListenOptions {
  host?: string
  port?: number
  limits: GatewayLimits
  onError: (error: Error) => void
}

export interface RunningServer {
  url: string
  port: number
  close(): Promise<void>
}

/** The longest `close` lets the answers in progress finish before it cuts their connections. */
export const CLOSE_GRACE_MS = 3_000

/**
 * Requests one keep-alive connection may carry: no bound (Node's `0`). Node's own bound answers
 * every request past it with a bare 503 — each request a client pipelined behind the last allowed
 * one, or sent after the `Connection: close` it did not heed — so a long-lived client lost a call
 * every thousand. Connections still end when idle (`keepAliveTimeout`), and their number is capped
 * (`maxConnections`); what a connection may ask is bounded per credential (rate, in-flight bodies).
 */
export const MAX_REQUESTS_PER_SOCKET = 0

/**
 * Serves the app on `node:http` with bounds so a slow, huge or numerous request cannot exhaust
 * the server: a header deadline, a body deadline (the whole request within both), a body size
 * cap (413), a cap on header size, on open connections and on bodies read at once.
 */
export async function listen(app: GatewayApp, options: ListenOptions): Promise<RunningServer> {
  const { limits } = options
  const handler = createNodeHandler(app, limits, options.onError)
  const server: Server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      // Receiving the whole request (headers and body); the response may take longer (waitMs).
      requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
      // How often Node enforces the two deadlines above (default every 30 s, which would let a
      // slow client hold a connection for 40 s past a 10 s deadline).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => {
      markDuplicateAuthorization(req)
      handler(req, res)
    },
  )
  // With a listener here Node no longer answers `Expect: 100-continue` by itself: the handler
  // invites the body only once the request passed the Origin and credential checks.
  server.on('checkContinue', (req, res) => {
    markDuplicateAuthorization(req)
    handler(req, res)
  })
  // A client may half-close its side once the request is sent (HTTP/1.1 allows it; `nc`, some
  // proxies and raw sockets do). Node's default treats that FIN as an abort and the request then
  // got no answer at all; with this set Node answers, then ends the connection. A client that is
  // really gone still ends the request (the write fails, the socket closes).
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  server.maxRequestsPerSocket = MAX_REQUESTS_PER_SOCKET
  server.maxConnections = limits.maxConnections
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        // Stop accepting; let the answers in progress finish (the gateway ends its waits as it
        // closes, so they are short), closing each connection as it falls idle; whatever is still
        // open after CLOSE_GRACE_MS is cut.
        const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS)
        const idle = setInterval(() => server.closeIdleConnections(), 50)
        server.close(() => {
          clearTimeout(grace)
          clearInterval(idle)
          resolve()
        })
        server.closeIdleConnections()
      }),
  }
}

/**
 * Node keeps only the first of several `Authorization` headers. Duplicated credentials must be
 * rejected, so join them again ("Bearer a, Bearer b") and let the bearer parser refuse them.
 */
function markDuplicateAuthorization(req: IncomingMessage): void {
  const values: string[] = []
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === 'authorization') values.push(req.rawHeaders[i + 1] ?? '')
  }
  if (values.length > 1) req.headers.authorization = values.join(', ')
}
