import { createServer } from 'node:net'
import { CliError } from '../errors.ts'
import type { StackConfig } from './stack-config.ts'
import { DEFAULT_NATIVE_PORT } from './stack-config.ts'
import { knownNativePort } from './stack-plan.ts'

/** True when `port` on `host` can be bound right now. */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)))
  })
}

/** A port on `host` that was free a moment ago (the OS picks it). */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * The native server's port. A number in the configuration is used as it is. `"auto"` reuses the
 * port recorded in the previous `state/stack.env`; on a fresh setup (nothing recorded) it is 3810,
 * or a free port when 3810 is taken. Returns whether the port was chosen now.
 */
export async function resolveNativePort(
  config: StackConfig,
  previous: ReadonlyMap<string, string>,
): Promise<{ port: number; fresh: boolean }> {
  const known = knownNativePort(config, previous)
  if (known !== undefined) return { port: known, fresh: false }
  if (await isPortFree(config.native.host, DEFAULT_NATIVE_PORT))
    return { port: DEFAULT_NATIVE_PORT, fresh: true }
  return { port: await freePort(config.native.host), fresh: true }
}

/** Throws `ERR_CLI_PORT_IN_USE` naming the setting to change when `port` cannot be bound. */
export async function assertPortFree(host: string, port: number, setting: string): Promise<void> {
  if (await isPortFree(host, port)) return
  throw new CliError(
    'ERR_CLI_PORT_IN_USE',
    `${host}:${port} is already in use: stop the process using it or change ${setting} in sallyport.json`,
  )
}
