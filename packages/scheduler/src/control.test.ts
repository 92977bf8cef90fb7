import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest'
import { schedulerErrorOf, useTempDirs } from '../test/helpers.ts'
import {
  askScheduler,
  type ControlRequest,
  type ControlResult,
  callScheduler,
  MAX_SOCKET_PATH_BYTES,
  serveControl,
} from './control.ts'
import { SchedulerError } from './errors.ts'
import type { RunRecord } from './history.ts'
import type { SchedulerStatus, SyncReport } from './scheduler.ts'

const tempDir = useTempDirs('sp-ctl-')
const servers: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

async function serve(path: string, handle: (request: ControlRequest) => Promise<unknown>) {
  const server = await serveControl(path, handle)
  servers.push(server)
  return server
}

/** Sends raw bytes and returns the raw answer (until the server ends the connection). */
function rawCall(path: string, text: string, end = false): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = ''
    const socket = connect(path)
    socket.setEncoding('utf8')
    socket.on('connect', () => (end ? socket.end(text) : socket.write(text)))
    socket.on('data', (chunk: string) => {
      buffer += chunk
    })
    socket.on('end', () => resolve(buffer))
    socket.on('error', reject)
  })
}

const handler = async (request: ControlRequest): Promise<unknown> => {
  switch (request.op) {
    case 'status':
      return { healthy: true, running: [] }
    case 'sync':
      return { ok: true, rebind: request.rebind }
    case 'run':
      if (request.id === 'missing') throw new SchedulerError('ERR_SCHEDULER_NOT_FOUND', 'no task missing')
      if (request.id === 'crash') throw new Error('secret internal detail /home/x')
      return { outcome: 'completed', id: request.id }
  }
}

describe('serveControl / callScheduler', () => {
  it('round-trips status, sync and run', async () => {
    const path = join(tempDir(), 's.sock')
    await serve(path, handler)
    expect(await callScheduler(path, { op: 'status' })).toEqual({ healthy: true, running: [] })
    expect(await callScheduler(path, { op: 'sync' })).toEqual({ ok: true, rebind: false })
    expect(await callScheduler(path, { op: 'sync', rebind: true })).toEqual({ ok: true, rebind: true })
    expect(await callScheduler(path, { op: 'run', id: 'daily' })).toEqual({
      outcome: 'completed',
      id: 'daily',
    })
  })

  it('askScheduler gives the answer typed by the request', async () => {
    const path = join(tempDir(), 's.sock')
    await serve(path, handler)
    const status = await askScheduler(path, { op: 'status' })
    expectTypeOf(status).toEqualTypeOf<SchedulerStatus>()
    expect(status).toEqual({ healthy: true, running: [] })
    expectTypeOf<ControlResult<{ op: 'sync'; rebind: true }>>().toEqualTypeOf<SyncReport>()
    expectTypeOf<ControlResult<{ op: 'run'; id: string }>>().toEqualTypeOf<RunRecord>()
    const error = await schedulerErrorOf(askScheduler(path, { op: 'run', id: 'missing' }))
    expect(error.code).toBe('ERR_SCHEDULER_NOT_FOUND')
  })

  it('maps a SchedulerError of the handler to the same code and message', async () => {
    const path = join(tempDir(), 's.sock')
    await serve(path, handler)
    const error = await schedulerErrorOf(callScheduler(path, { op: 'run', id: 'missing' }))
    expect(error.code).toBe('ERR_SCHEDULER_NOT_FOUND')
    expect(error.message).toBe('no task missing')
  })

  it('maps any other error to ERR_SCHEDULER_INTERNAL without its message', async () => {
    const path = join(tempDir(), 's.sock')
    await serve(path, handler)
    const raw = await rawCall(path, `${JSON.stringify({ op: 'run', id: 'crash' })}\n`)
    expect(JSON.parse(raw)).toEqual({ ok: false, code: 'ERR_SCHEDULER_INTERNAL', error: 'internal error' })
    const error = await schedulerErrorOf(callScheduler(path, { op: 'run', id: 'crash' }))
    expect(error.code).toBe('ERR_SCHEDULER_INTERNAL')
    expect(error.message).not.toContain('secret')
  })

  it.each([
    ['not JSON', 'hello\n'],
    ['an unknown op', '{"op":"delete"}\n'],
    ['a run without id', '{"op":"run"}\n'],
    ['a run with a long id', `{"op":"run","id":"${'a'.repeat(129)}"}\n`],
    ['null', 'null\n'],
    ['a number', '42\n'],
  ])('answers %s with ERR_SCHEDULER_BAD_REQUEST and never calls the handler', async (_, line) => {
    const path = join(tempDir(), 's.sock')
    let called = false
    await serve(path, async () => {
      called = true
      return 'x'
    })
    expect(JSON.parse(await rawCall(path, line))).toEqual({
      ok: false,
      code: 'ERR_SCHEDULER_BAD_REQUEST',
      error: 'bad request',
    })
    expect(called).toBe(false)
  })

  it('a request line over 4096 bytes is a bad request', async () => {
    const path = join(tempDir(), 's.sock')
    await serve(path, handler)
    expect(JSON.parse(await rawCall(path, 'x'.repeat(5000))).code).toBe('ERR_SCHEDULER_BAD_REQUEST')
  })

  it('a client that hangs up before a full line never reaches the handler', async () => {
    const path = join(tempDir(), 's.sock')
    let called = false
    await serve(path, async () => {
      called = true
      return 'x'
    })
    expect(await rawCall(path, '{"op":"status"}', true)).toBe('')
    expect(called).toBe(false)
    expect(await callScheduler(path, { op: 'status' })).toBe('x')
  })

  it('callScheduler turns a bad-request answer into a SchedulerError', async () => {
    const path = join(tempDir(), 's.sock')
    await serve(path, handler)
    const error = await schedulerErrorOf(callScheduler(path, { op: 'nope' } as unknown as ControlRequest))
    expect(error.code).toBe('ERR_SCHEDULER_BAD_REQUEST')
  })

  it('a second serveControl on a live socket is ERR_SCHEDULER_EXISTS and leaves the first serving', async () => {
    const path = join(tempDir(), 's.sock')
    await serve(path, handler)
    expect((await schedulerErrorOf(serveControl(path, handler))).code).toBe('ERR_SCHEDULER_EXISTS')
    expect(await callScheduler(path, { op: 'status' })).toEqual({ healthy: true, running: [] })
  })

  it('replaces a stale socket left by a scheduler that died', async () => {
    const path = join(tempDir(), 's.sock')
    const child = spawnSync(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ])
    expect(child.signal).toBe('SIGKILL')
    expect(statSync(path).isSocket()).toBe(true)
    await expect(callScheduler(path, { op: 'status' }, 2_000)).rejects.toMatchObject({
      code: 'ERR_SCHEDULER_UNAVAILABLE',
    })
    await serve(path, handler)
    expect(await callScheduler(path, { op: 'status' })).toEqual({ healthy: true, running: [] })
  })

  it('replaces a leftover regular file at the socket path', async () => {
    const path = join(tempDir(), 's.sock')
    writeFileSync(path, 'junk')
    await serve(path, handler)
    expect(statSync(path).isSocket()).toBe(true)
  })

  it('makes the socket 0600 and removes it on close', async () => {
    const path = join(tempDir(), 's.sock')
    const server = await serveControl(path, handler)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    await server.close()
    expect(existsSync(path)).toBe(false)
    expect((await schedulerErrorOf(callScheduler(path, { op: 'status' }))).code).toBe(
      'ERR_SCHEDULER_UNAVAILABLE',
    )
  })

  it('restores the process umask after listening', async () => {
    const before = process.umask()
    await serve(join(tempDir(), 's.sock'), handler)
    expect(process.umask()).toBe(before)
  })

  it('serves and answers on a socket path longer than the kernel takes (a deep stack directory), cwd unchanged', async () => {
    const deep = join(tempDir(), 'd'.repeat(60), 'e'.repeat(60))
    mkdirSync(deep, { recursive: true })
    const path = join(deep, 'scheduler.sock')
    expect(Buffer.byteLength(path)).toBeGreaterThan(MAX_SOCKET_PATH_BYTES)
    const cwd = process.cwd()
    await serve(path, handler)
    expect(existsSync(path)).toBe(true)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(await callScheduler(path, { op: 'status' })).toEqual({ healthy: true, running: [] })
    expect(process.cwd()).toBe(cwd)
  })

  it('callScheduler on a missing socket is ERR_SCHEDULER_UNAVAILABLE', async () => {
    const error = await schedulerErrorOf(callScheduler(join(tempDir(), 'none.sock'), { op: 'status' }))
    expect(error.code).toBe('ERR_SCHEDULER_UNAVAILABLE')
    expect(error.message).toContain('not running')
  })

  it('callScheduler gives up after its timeout when nobody answers', async () => {
    const path = join(tempDir(), 's.sock')
    let release: (() => void) | undefined
    await serve(path, () => new Promise((resolve) => (release = () => resolve('late'))))
    const error = await schedulerErrorOf(callScheduler(path, { op: 'status' }, 200))
    expect(error.code).toBe('ERR_SCHEDULER_UNAVAILABLE')
    expect(error.message).toContain('in time')
    release?.()
  })
})
