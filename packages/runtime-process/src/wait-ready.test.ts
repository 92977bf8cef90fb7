import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RuntimeProcessError } from './errors.ts'
import { type SupervisedProcess, spawnProcessGroup } from './spawn-process.ts'
import {
  basicAuth,
  LISTENING_LINE,
  waitForListening,
  waitUntilHealthy,
  waitUntilReady,
} from './wait-ready.ts'

// A stand-in runtime: an HTTP server in this process answers like `opencode serve`; a shell
// process prints (or does not print) the listening line.
const AUTH = basicAuth('u', 'p')
let server: Server
let url: string
let healthyAfter = 0
let sessions: string[] = []
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.headers.authorization !== AUTH) return res.writeHead(401).end()
    if (req.url === '/global/health') {
      if (healthyAfter-- > 0) return res.writeHead(503).end()
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"healthy":true,"version":"9.9.9"}')
    }
    if (req.url?.startsWith('/session?')) {
      sessions.push(new URL(req.url, 'http://x').searchParams.get('directory') ?? '')
      return res.writeHead(200, { 'content-type': 'application/json' }).end('[]')
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function fake(script: string): SupervisedProcess {
  const child = spawnProcessGroup({
    name: 'fake',
    command: '/bin/sh',
    args: ['-c', script],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    cwd: process.cwd(),
  })
  return child
}

const soon = (ms = 5000): number => Date.now() + ms

describe('waitUntilReady', () => {
  it('waits for the listening line, then for a healthy answer; resolves with URL and version', async () => {
    healthyAfter = 2
    const child = fake(`sleep 0.2; echo "opencode server listening on ${url}/"; sleep 30`)
    try {
      expect(await waitUntilReady({ child, authorization: AUTH, deadline: soon(), intervalMs: 20 })).toEqual({
        url,
        version: '9.9.9',
      })
    } finally {
      await child.stop(100)
    }
  })

  it('opens the instance of a directory when asked', async () => {
    sessions = []
    healthyAfter = 0
    const child = fake(`echo "opencode server listening on ${url}"; sleep 30`)
    try {
      await waitUntilReady({ child, authorization: AUTH, deadline: soon(), directory: '/w s' })
      expect(sessions).toEqual(['/w s'])
    } finally {
      await child.stop(100)
    }
  })

  it('names the exit and the last output line when the process ends before listening', async () => {
    const child = fake('echo "fatal: no config" >&2; exit 3')
    const error = await waitUntilReady({ child, authorization: AUTH, deadline: soon() }).catch((e) => e)
    expect(RuntimeProcessError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'ERR_RUNTIME_PROCESS_EXITED',
      message: 'fake runtime exited with code 3 before it was listening (last output: fatal: no config)',
      exit: { code: 3, signal: null },
    })
  })

  it('ignores a listening line on stderr and times out without one on stdout', async () => {
    const child = fake(`echo "opencode server listening on ${url}" >&2; sleep 30`)
    try {
      const error = await waitForListening(child, soon(400)).catch((e) => e)
      expect(error).toMatchObject({
        code: 'ERR_RUNTIME_PROCESS_TIMEOUT',
        message: 'fake runtime printed no listening line in time',
      })
    } finally {
      await child.stop(100)
    }
  })

  it('times out naming the last health answer', async () => {
    const child = fake('sleep 30')
    try {
      const error = await waitUntilHealthy({
        child,
        url,
        authorization: basicAuth('u', 'wrong'),
        deadline: soon(300),
        intervalMs: 20,
      }).catch((e) => e)
      expect(error).toMatchObject({
        code: 'ERR_RUNTIME_PROCESS_TIMEOUT',
        message: 'fake runtime did not become healthy in time (last: HTTP 401)',
      })
    } finally {
      await child.stop(100)
    }
  })

  it('stops waiting for health once the process has exited', async () => {
    const child = fake('exit 0')
    await child.exit
    const error = await waitUntilHealthy({ child, url, authorization: AUTH, deadline: soon() }).catch(
      (e) => e,
    )
    expect(error).toMatchObject({ code: 'ERR_RUNTIME_PROCESS_EXITED' })
    expect(error.message).toBe('fake runtime exited with code 0 before it was healthy')
  })
})

describe('basicAuth and LISTENING_LINE', () => {
  it('encodes user:password as HTTP Basic', () => {
    expect(basicAuth('opencode', 'pw')).toBe(`Basic ${Buffer.from('opencode:pw').toString('base64')}`)
  })

  it('matches the runtime line and captures its URL', () => {
    expect(LISTENING_LINE.exec('opencode server listening on http://127.0.0.1:4096')?.[1]).toBe(
      'http://127.0.0.1:4096',
    )
  })
})
