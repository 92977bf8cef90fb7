import { createServer } from 'node:net'

/**
 * Ports handed out are drawn from below Linux's default ephemeral range (32768–60999): the OS
 * takes the local port of every outgoing connection from that range, so a port it picked for
 * `listen(0)` and released could be taken by any process's next connection before the caller
 * binds it. Below it, only another test asking for a port can collide, and not within one process.
 */
const RANGE_START = 20_000
const RANGE_END = 32_767
const ATTEMPTS = 50
const handedOut = new Set<number>()

/**
 * A TCP port on `host` that was free a moment ago. Racy by nature (another process may bind it
 * first), but never one this process handed out before, and not one the OS lends to outgoing
 * connections. Falls back to a port the OS picks when no drawn port is free.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = RANGE_START + Math.floor(Math.random() * (RANGE_END - RANGE_START + 1))
    if (handedOut.has(port)) continue
    if ((await tryListen(host, port)) !== undefined) {
      handedOut.add(port)
      return port
    }
  }
  const port = await tryListen(host, 0)
  if (port === undefined) throw new Error(`no free TCP port on ${host}`)
  handedOut.add(port)
  return port
}

/** Binds and releases `port` (0: the OS picks); the bound port, or undefined when it is taken. */
function tryListen(host: string, port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(undefined))
    server.listen({ port, host, exclusive: true }, () => {
      const address = server.address()
      const bound = typeof address === 'object' && address !== null ? address.port : undefined
      server.close(() => resolve(bound))
    })
  })
}
