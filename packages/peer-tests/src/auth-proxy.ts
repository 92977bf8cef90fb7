import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface AuthProxyOptions {
  /**
   * Origin of the server to forward to, e.g. `http://127.0.0.1:4321`, or a function returning it,
   * read per request: the proxy can then start before the server it fronts, whose configuration
   * may need the proxy's own origin (an `Origin` allowlist).
   */
  target: string | (() => string)
  /** The full `Authorization` header value to set, e.g. `Bearer agk_…`; a function is read per request. */
  authorization: string | (() => string)
}

/** One request that went through the proxy: method, path and the upstream status (never headers). */
export interface ProxiedExchange {
  method: string
  path: string
  status: number
}

export interface AuthProxy {
  /** `http://127.0.0.1:<port>` */
  url: string
  /** Every exchange so far, oldest first. */
  exchanges: readonly ProxiedExchange[]
  close(): Promise<void>
}

/**
 * A loopback HTTP proxy that forwards every request to `target` unchanged (method, path, body,
 * `Host`, `Origin` and every other header) except that it sets `Authorization`. Peers that have
 * no option for a bearer header (the conformance suite) reach the gateway through it. Bodies are
 * streamed both ways, so SSE responses arrive as the gateway sends them.
 *
 * Throws `TypeError` when a string `target` is not an http origin or a string `authorization` is
 * empty; a target function that returns no origin gets its requests answered 502.
 *
 * @example
 * const proxy = await startAuthProxy({ target: gateway.url, authorization: `Bearer ${key}` })
 * // run a peer against `${proxy.url}/mcp`, then
 * await proxy.close()
 */
export async function startAuthProxy(options: AuthProxyOptions): Promise<AuthProxy> {
  if (typeof options.target === 'string') parseTarget(options.target)
  if (typeof options.authorization === 'string' && options.authorization.trim() === '')
    throw new TypeError('startAuthProxy: authorization is required')
  const authorization = (): string =>
    typeof options.authorization === 'string' ? options.authorization : options.authorization()
  const exchanges: ProxiedExchange[] = []
  const server = createServer((req, res) => {
    let target: URL
    try {
      target = parseTarget(typeof options.target === 'string' ? options.target : options.target())
    } catch {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('proxy: no valid target')
      return
    }
    const headers: IncomingHttpHeaders = { ...req.headers, authorization: authorization() }
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
      },
      (up) => {
        exchanges.push({ method: req.method ?? '', path: req.url ?? '', status: up.statusCode ?? 0 })
        res.writeHead(up.statusCode ?? 502, up.statusMessage, up.rawHeaders)
        up.pipe(res)
      },
    )
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
      res.end('proxy: upstream unreachable')
    })
    // The peer went away (or the exchange ended): drop the upstream side too, so an open SSE
    // stream never outlives its client.
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function parseTarget(value: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new TypeError('startAuthProxy: target must be an http origin')
  }
  if (url.protocol !== 'http:' || url.origin !== value.replace(/\/$/, ''))
    throw new TypeError('startAuthProxy: target must be an http origin')
  return url
}
