import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * What the proxy does with the runtime's `GET /event` stream:
 * - `pass`: forwards it (and, on entering `pass`, everything held while stalled);
 * - `stall`: keeps every connection open but forwards no byte (a proxy that stopped forwarding:
 *   the bytes are held, and flushed when the mode goes back to `pass`); new connections get their
 *   response headers and then nothing;
 * - `refuse`: answers new connections 503 at once (open ones are left as they are: `drop()` them).
 */
export type EventMode = 'pass' | 'stall' | 'refuse'

/** One request the proxy forwarded (path without the query: no id of the workspace). */
export interface ProxiedRequest {
  method: string
  path: string
  at: number
}

/** A loopback HTTP proxy in front of the runtime that can drop, stall or refuse `/event`. */
export interface EventProxy {
  readonly url: string
  readonly mode: EventMode
  setMode(mode: EventMode): void
  /** Cuts every open `/event` connection (the client sees the stream end). */
  drop(): void
  /** `/event` connections open now, opened in total. */
  readonly streams: { readonly open: number; readonly opened: number }
  /** Every request other than `/event`, oldest first. */
  readonly requests: readonly ProxiedRequest[]
  close(): Promise<void>
}

interface Stream {
  readonly response: ServerResponse
  readonly held: Buffer[]
  readonly destroy: () => void
}

/** Starts the proxy on 127.0.0.1 (a port chosen by the OS), forwarding to `target`. */
export async function startEventProxy(target: string): Promise<EventProxy> {
  const upstream = new URL(target)
  const agent = new Agent({ keepAlive: true, maxSockets: 256 })
  const streams = new Set<Stream>()
  const requests: ProxiedRequest[] = []
  let mode: EventMode = 'pass'
  let opened = 0

  const forward = (
    req: IncomingMessage,
    res: ServerResponse,
    onResponse: (up: IncomingMessage) => void,
  ): void => {
    const out = httpRequest(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      onResponse,
    )
    out.on('error', () => res.destroy())
    req.on('error', () => out.destroy())
    res.on('close', () => {
      if (!res.writableFinished) out.destroy()
    })
    req.pipe(out)
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    if (path !== '/event') {
      requests.push({ method: req.method ?? 'GET', path, at: Date.now() })
      forward(req, res, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      })
      return
    }
    if (mode === 'refuse') {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('event stream refused by the test proxy')
      return
    }
    opened++
    forward(req, res, (up) => {
      const stream: Stream = {
        response: res,
        held: [],
        destroy: () => {
          up.destroy()
          res.destroy()
        },
      }
      streams.add(stream)
      res.writeHead(up.statusCode ?? 502, up.headers)
      res.flushHeaders()
      up.on('data', (chunk: Buffer) => {
        if (mode === 'stall') stream.held.push(chunk)
        else res.write(chunk)
      })
      up.on('end', () => res.end())
      up.on('error', () => res.destroy())
      res.on('close', () => {
        streams.delete(stream)
        up.destroy()
      })
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    get mode() {
      return mode
    },
    setMode(next) {
      mode = next
      if (next !== 'pass') return
      for (const stream of streams) for (const chunk of stream.held.splice(0)) stream.response.write(chunk)
    },
    drop() {
      for (const stream of [...streams]) stream.destroy()
    },
    get streams() {
      return { open: streams.size, opened }
    },
    requests,
    async close() {
      for (const stream of [...streams]) stream.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      agent.destroy()
    },
  }
}
