import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { enabledIds, makeStack, schedulerErrorOf, useTempDirs, writeTask } from '../test/helpers.ts'
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

  it('a deactivating change is never refused: a failed sync is applied, a failed call deferred', async () => {
    const socket = join(tempDir(), 's.sock')
    let answer: () => Promise<unknown> = async () => ({
      ok: false,
      at: 'x',
      error: 'sallyport.json is not valid JSON',
    })
    await schedulerAnswering(socket, () => answer())
    const reconcile = socketReconciler(socket)
    expect(await reconcile({ id: 'a', activates: false })).toBe('applied')
    expect(await reconcile({ activates: false })).toBe('applied')
    // The same failed sync refuses an activating change (and one that does not say).
    expect((await schedulerErrorOf(reconcile({ id: 'a', activates: true }))).code).toBe(
      'ERR_SCHEDULER_RECONCILE',
    )
    expect((await schedulerErrorOf(reconcile({ id: 'a' }))).code).toBe('ERR_SCHEDULER_RECONCILE')

    answer = async () => {
      throw new SchedulerError('ERR_SCHEDULER_IO', 'cannot read knowledge/tasks/ (EACCES)')
    }
    expect(await reconcile({ id: 'a', activates: false })).toBe('deferred')
    expect((await schedulerErrorOf(reconcile({ id: 'a', activates: true }))).code).toBe(
      'ERR_SCHEDULER_RECONCILE',
    )
    answer = async () => {
      throw new Error('boom')
    }
    expect(await reconcile({ id: 'a', activates: false })).toBe('deferred')
  })

  it('an odd answer (not a report) to a deactivating change is not a refusal', async () => {
    const socket = join(tempDir(), 's.sock')
    let result: unknown = 'odd'
    await schedulerAnswering(socket, async () => result)
    const reconcile = socketReconciler(socket)
    expect(await reconcile({ id: 'a', activates: false })).toMatch(/^(applied|deferred)$/)
    result = { ok: true }
    expect(await reconcile({ id: 'a', activates: false })).toBe('applied')
  })

  // An answer without a report (`{"ok":true,"result":null}`) must not undo a deactivation.
  it('an answer without a report (result null) to a deactivating change never throws', async () => {
    const socket = join(tempDir(), 's.sock')
    await schedulerAnswering(socket, async () => null)
    await expect(socketReconciler(socket)({ id: 'a', activates: false })).resolves.toMatch(
      /^(applied|deferred)$/,
    )
  })

  it('the invalid-id refusal applies only to activating changes', async () => {
    const socket = join(tempDir(), 's.sock')
    await schedulerAnswering(socket, async () => okReport([{ file: 'a.yml', id: 'a', problem: 'bad' }]))
    const reconcile = socketReconciler(socket)
    expect(await reconcile({ id: 'a', activates: false })).toBe('applied')
    expect((await schedulerErrorOf(reconcile({ id: 'a', activates: true }))).code).toBe(
      'ERR_SCHEDULER_RECONCILE',
    )
  })

  it('with a scheduler whose syncs fail, pause and remove succeed and stay; create and resume are rolled back', async () => {
    const paths = makeStack(tempDir(), { enabled: ['on', 'gone'] })
    writeTask(paths, 'on', 'schedule: "@daily"\n')
    writeTask(paths, 'gone', 'schedule: "@daily"\n')
    writeTask(paths, 'off', 'schedule: "@daily"\n')
    const requests = await schedulerAnswering(paths.socket, async () => ({
      ok: false,
      at: '2026-01-01T00:00:00.000Z',
      error: 'sallyport.json is not valid JSON',
    }))
    const helper = createTaskHelper({ paths, reconcile: socketReconciler(paths.socket) })

    expect(await helper.pause('on')).toEqual({ changed: true, reconciled: 'applied' })
    const removed = await helper.remove('gone')
    expect(removed.reconciled).toBe('applied')
    expect(enabledIds(paths)).toEqual([])
    expect(existsSync(join(paths.tasksDir, 'gone.yml'))).toBe(false)
    expect(existsSync(join(paths.disabledTasksDir, removed.backup))).toBe(true)

    const before = {
      config: readFileSync(paths.engineConfig, 'utf8'),
      tasks: readdirSync(paths.tasksDir).sort(),
    }
    const refusedCreate = await schedulerErrorOf(
      helper.create({ id: 'new', prompt: 'x', schedule: '@daily' }),
    )
    expect(refusedCreate.code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(refusedCreate.message).toContain('rolled back')
    expect((await schedulerErrorOf(helper.resume('off'))).code).toBe('ERR_SCHEDULER_RECONCILE')
    expect({
      config: readFileSync(paths.engineConfig, 'utf8'),
      tasks: readdirSync(paths.tasksDir).sort(),
    }).toEqual(before)
    expect(requests).toHaveLength(4)
  })

  it('pausing a task the scheduler reports invalid is not undone', async () => {
    const paths = makeStack(tempDir(), { enabled: ['a'] })
    writeTask(paths, 'a', 'schedule: "@daily"\n')
    await schedulerAnswering(paths.socket, async () => okReport([{ file: 'a.yml', id: 'a', problem: 'bad' }]))
    const helper = createTaskHelper({ paths, reconcile: socketReconciler(paths.socket) })
    expect(await helper.pause('a')).toEqual({ changed: true, reconciled: 'applied' })
    expect(enabledIds(paths)).toEqual([])
    // Resuming it is refused (and rolled back).
    expect((await schedulerErrorOf(helper.resume('a'))).code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(enabledIds(paths)).toEqual([])
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
