import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from '@modelcontextprotocol/node'
import type { GatewayApp } from './app.js'

export interface ListenOptions {
  host?: string
  port?: number
  maxRequestBodyBytes: number
  onError: (error: Error) => void
}

export interface RunningServer {
  url: string
  port: number
  close(): Promise<void>
}

/**
 * Serves the app on `node:http` with bounds so a slow or huge request cannot exhaust the server:
 * header and whole-request timeouts, a body size cap (413) and a cap on header size.
 */
export async function listen(app: GatewayApp, options: ListenOptions): Promise<RunningServer> {
  const handler = toNodeHandler(app, {
    maxRequestBodySize: options.maxRequestBodyBytes,
    onerror: options.onError,
  })
  const server: Server = createServer(
    {
      // A tool may wait up to 30 s (waitMs); leave room for the upstream reads after it.
      requestTimeout: 90_000,
      headersTimeout: 15_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => {
      markDuplicateAuthorization(req)
      void handler(req, res)
    },
  )
  server.maxRequestsPerSocket = 1000
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
        server.close(() => resolve())
        server.closeAllConnections()
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
