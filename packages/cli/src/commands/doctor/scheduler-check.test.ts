import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultEngineConfig, SchedulerError, type SchedulerStatus } from '@sallyport/scheduler'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { stackLayout } from '../../stack/layout.ts'
import { schedulerChecks } from './scheduler-check.ts'

let root: string
beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), 'sp-doctor-sched-'))
  await mkdir(join(root, 'config/akm'), { recursive: true })
  await mkdir(join(root, 'knowledge/tasks'), { recursive: true })
  writeFileSync(join(root, 'config/akm/config.json'), JSON.stringify(defaultEngineConfig()))
  writeFileSync(join(root, 'sallyport.json'), JSON.stringify({ version: 1, assistant: { timezone: 'UTC' } }))
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

const notRunning = async (): Promise<never> => {
  throw new SchedulerError('ERR_SCHEDULER_UNAVAILABLE', 'not running')
}
const answering = (status: SchedulerStatus) => async (): Promise<SchedulerStatus> => status

describe('schedulerChecks', () => {
  it('warns when the scheduler is not running and counts valid tasks', async () => {
    writeFileSync(join(root, 'knowledge/tasks/a.yml'), 'version: 1\nprompt: hello\n')
    const checks = await schedulerChecks(stackLayout(root), notRunning)
    expect(checks).toEqual([
      expect.objectContaining({ name: 'scheduler', status: 'warn', detail: 'not running' }),
      expect.objectContaining({ name: 'tasks', status: 'ok', detail: '1 valid task source' }),
    ])
  })

  it('fails when the last sync failed, naming its error', async () => {
    const checks = await schedulerChecks(
      stackLayout(root),
      answering({
        healthy: false,
        running: [],
        lastSync: { ok: false, at: '2026-11-27T00:00:00.000Z', error: 'sallyport.json is not valid JSON' },
      }),
    )
    expect(checks[0]).toMatchObject({ name: 'scheduler', status: 'fail' })
    expect(checks[0]?.detail).toContain('sallyport.json is not valid JSON')
  })

  it('is ok with a healthy scheduler, and warns about invalid task sources without failing', async () => {
    writeFileSync(join(root, 'knowledge/tasks/bad.yml'), 'version: 1\nprompt: x\nenabled: true\n')
    const checks = await schedulerChecks(
      stackLayout(root),
      answering({
        healthy: true,
        running: [],
        lastSync: {
          ok: true,
          at: '2026-11-27T00:00:00.000Z',
          timezone: 'UTC',
          bound: [],
          paused: [],
          manual: [],
          invalid: [],
        },
      }),
    )
    expect(checks[0]).toMatchObject({ name: 'scheduler', status: 'ok' })
    expect(checks[1]).toMatchObject({ name: 'tasks', status: 'warn' })
    expect(checks[1]?.detail).toContain('knowledge/tasks/bad.yml: enabled: not allowed')
  })

  it("fails on an engine configuration that is not the stack's own", async () => {
    const engine = defaultEngineConfig()
    writeFileSync(
      join(root, 'config/akm/config.json'),
      JSON.stringify({
        ...engine,
        engine: { ...engine.engine, passwordFile: '../../state/credentials/owner/key' },
      }),
    )
    const checks = await schedulerChecks(stackLayout(root), notRunning)
    expect(checks[0]).toMatchObject({ name: 'scheduler', status: 'fail' })
    expect(checks[0]?.detail).toContain('engine.passwordFile must be ../../state/native-password')
  })
})
