import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A fake npm registry that answers 404 to everything and records what was asked. */
export interface RegistryRecorder {
  url: string
  hits: string[]
  close(): Promise<void>
}

export async function startRegistryRecorder(): Promise<RegistryRecorder> {
  const hits: string[] = []
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`)
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
