import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { basicAuth } from '@sallyport/runtime-process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../stack/ports.ts'
import type { HealthTarget } from '../../stack/stack-plan.ts'
import { processChecks } from './process-checks.ts'

const scratch = mkdtempSync(join(tmpdir(), 'sallyport-process-checks-'))
const passwordFile = { path: join(scratch, 'pw'), shownAs: 'state/native-password' }
writeFileSync(passwordFile.path, 'secret\n')

let runtimePort: number
let silentPort: number
const servers: Server[] = []
beforeAll(async () => {
  const runtime = createHttpServer((req, res) => {
    if (req.headers.authorization !== basicAuth('opencode', 'secret')) return res.writeHead(401).end()
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"healthy":true,"version":"1.2.3"}')
  })
  // Accepts and closes every connection: a port taken by something that is no HTTP server.
  const silent = createServer((socket) => socket.destroy())
  for (const server of [runtime, silent]) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push(server)
  }
  runtimePort = (runtime.address() as { port: number }).port
  silentPort = (silent.address() as { port: number }).port
})
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve))
  rmSync(scratch, { recursive: true, force: true })
})

function target(port: number, overrides: Partial<HealthTarget> = {}): HealthTarget {
  return {
    name: 'assistant runtime',
    host: '127.0.0.1',
    port,
    url: `http://127.0.0.1:${port}/global/health`,
    basicAuth: { username: 'opencode', passwordFile },
    healthyField: 'healthy',
    setting: 'native.port',
    ...overrides,
  }
}

describe('processChecks', () => {
  it('healthy with its own password: ok with the version', async () => {
    expect(await processChecks({ healthTargets: [target(runtimePort)] })).toEqual([
      { name: 'assistant runtime', status: 'ok', detail: `healthy on 127.0.0.1:${runtimePort} (1.2.3)` },
    ])
  })

  it('answering 401: another stack, says which setting to change', async () => {
    const other = { path: join(scratch, 'other'), shownAs: 'x' }
    writeFileSync(other.path, 'not-it\n')
    const checks = await processChecks({
      healthTargets: [target(runtimePort, { basicAuth: { username: 'opencode', passwordFile: other } })],
    })
    expect(checks).toEqual([
      {
        name: 'assistant runtime',
        status: 'fail',
        detail: `127.0.0.1:${runtimePort} answers HTTP 401, not as this stack's assistant runtime (wrong password: another stack?)`,
        fix: 'stop the other server or change native.port in sallyport.json',
      },
    ])
  })

  it('probes without credentials when the password file cannot be read', async () => {
    const missing = { path: join(scratch, 'missing'), shownAs: 'x' }
    const [found] = await processChecks({
      healthTargets: [target(runtimePort, { basicAuth: { username: 'opencode', passwordFile: missing } })],
    })
    expect(found?.detail).toContain('answers HTTP 401')
  })

  it('a gateway is healthy on ok: true, not on healthy: true', async () => {
    const [found] = await processChecks({
      healthTargets: [target(runtimePort, { name: 'gateway', healthyField: 'ok', setting: 'gateway.port' })],
    })
    expect(found).toMatchObject({
      name: 'gateway',
      status: 'fail',
      detail: `127.0.0.1:${runtimePort} answers HTTP 200, not as this stack's gateway`,
    })
  })

  it('nothing listening: a warning to start the stack', async () => {
    const port = await freePort('127.0.0.1')
    expect(await processChecks({ healthTargets: [target(port, { name: 'moderator runtime' })] })).toEqual([
      {
        name: 'moderator runtime',
        status: 'warn',
        detail: `not running (127.0.0.1:${port} is free)`,
        fix: 'start the stack with `sallyport up`',
      },
    ])
  })

  it('taken by a process that does not answer HTTP: fails naming the setting', async () => {
    expect(
      await processChecks({ healthTargets: [target(silentPort, { setting: 'moderator.port' })] }),
    ).toEqual([
      {
        name: 'assistant runtime',
        status: 'fail',
        detail: `127.0.0.1:${silentPort} is taken by another process`,
        fix: 'stop it or change moderator.port in sallyport.json',
      },
    ])
  })
})
