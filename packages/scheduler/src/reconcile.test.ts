import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { enabledIds, makeStack, schedulerErrorOf, useTempDirs } from '../test/helpers.ts'
import { type ControlRequest, serveControl } from './control.ts'
import { SchedulerError } from './errors.ts'
import { socketReconciler } from './reconcile.ts'
import type { SyncReport } from './scheduler.ts'
import { createTaskHelper } from './task-helper.ts'

const tempDir = useTempDirs('sp-rec-')
const servers: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

const okReport = (invalid: { file: string; id?: string; problem: string }[] = []): SyncReport => ({
  ok: true,
  at: '2026-01-01T00:00:00.000Z',
  timezone: 'UTC',
  bound: [],
  paused: [],
  manual: [],
  invalid,
})

async function schedulerAnswering(socket: string, answer: (request: ControlRequest) => Promise<unknown>) {
  const requests: ControlRequest[] = []
  servers.push(
    await serveControl(socket, async (request) => {
      requests.push(request)
      return answer(request)
    }),
  )
  return requests
}

describe('socketReconciler', () => {
  it('is deferred when no scheduler runs', async () => {
    expect(await socketReconciler(join(tempDir(), 'none.sock'))({ id: 'a' })).toBe('deferred')
  })

  it('asks for a sync and is applied when it succeeds', async () => {
    const socket = join(tempDir(), 's.sock')
    const requests = await schedulerAnswering(socket, async () =>
      okReport([{ file: 'b.yml', id: 'b', problem: 'x' }]),
    )
    expect(await socketReconciler(socket)({ id: 'a' })).toBe('applied')
    expect(await socketReconciler(socket)({})).toBe('applied')
    expect(requests).toEqual([
      { op: 'sync', rebind: false },
      { op: 'sync', rebind: false },
    ])
  })

  it('throws ERR_SCHEDULER_RECONCILE when the sync fails', async () => {
    const socket = join(tempDir(), 's.sock')
    await schedulerAnswering(socket, async () => ({
      ok: false,
      at: 'x',
      error: 'config/akm/config.json is not valid JSON',
    }))
    const error = await schedulerErrorOf(socketReconciler(socket)({ id: 'a' }))
    expect(error.code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(error.message).toContain('config/akm/config.json is not valid JSON')
  })

  it('throws ERR_SCHEDULER_RECONCILE when the scheduler reports the changed task invalid', async () => {
    const socket = join(tempDir(), 's.sock')
    await schedulerAnswering(socket, async () =>
      okReport([{ file: 'a.yml', id: 'a', problem: 'schedule: never fires again' }]),
    )
    const error = await schedulerErrorOf(socketReconciler(socket)({ id: 'a' }))
    expect(error.code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(error.message).toContain('never fires again')
  })

  it('throws ERR_SCHEDULER_RECONCILE when the scheduler answers with an error', async () => {
    const socket = join(tempDir(), 's.sock')
    await schedulerAnswering(socket, async () => {
      throw new SchedulerError('ERR_SCHEDULER_IO', 'cannot read knowledge/tasks/ (EACCES)')
    })
    const error = await schedulerErrorOf(socketReconciler(socket)({}))
    expect(error.code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(error.message).toContain('EACCES')
  })

  it('a task helper with it rolls a create back when the running scheduler refuses the task', async () => {
    const paths = makeStack(tempDir())
    await schedulerAnswering(paths.socket, async () => okReport([{ file: 'a.yml', id: 'a', problem: 'bad' }]))
    const before = readFileSync(paths.engineConfig, 'utf8')
    const helper = createTaskHelper({ paths, reconcile: socketReconciler(paths.socket) })
    expect((await schedulerErrorOf(helper.create({ id: 'a', prompt: 'x', schedule: '@daily' }))).code).toBe(
      'ERR_SCHEDULER_RECONCILE',
    )
    expect(existsSync(join(paths.tasksDir, 'a.yml'))).toBe(false)
    expect(readFileSync(paths.engineConfig, 'utf8')).toBe(before)
    expect((await helper.create({ id: 'b', prompt: 'x', schedule: '@daily' })).reconciled).toBe('applied')
    expect(enabledIds(paths)).toEqual(['b'])
  })
})
