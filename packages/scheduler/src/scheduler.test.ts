import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  DEFAULT_STACK_CONFIG,
  deferred,
  FakeClock,
  makeStack,
  pollUntil,
  readHostConfig,
  schedulerErrorOf,
  useTempDirs,
  writeEnabled,
  writeHostConfig,
  writeStackConfig,
  writeTask,
} from '../test/helpers.ts'
import { setTaskEnabled } from './activation.ts'
import { SchedulerError } from './errors.ts'
import type { RunRecord } from './history.ts'
import type { SchedulerPaths } from './paths.ts'
import {
  createScheduler,
  LATE_TOLERANCE_MS,
  type Scheduler,
  type SchedulerOptions,
  SYNC_INTERVAL_MS,
  SYNC_TIMEOUT_MS,
  type SyncReport,
} from './scheduler.ts'
import type { TaskDefinition } from './task-source.ts'

/** Lets a test hold the next catalog read (of a sync or a runNow) until it opens the gate. */
const catalogGate = vi.hoisted(() => ({ next: undefined as Promise<void> | undefined }))
vi.mock('./task-files.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('./task-files.ts')>()
  return {
    ...original,
    readTaskCatalog: async (...args: Parameters<typeof original.readTaskCatalog>) => {
      const gate = catalogGate.next
      catalogGate.next = undefined
      if (gate) await gate
      return original.readTaskCatalog(...args)
    },
  }
})
afterEach(() => {
  catalogGate.next = undefined
})

const tempDir = useTempDirs('sp-sched-')

/** 2026-01-05 (a Monday) at `hhmm[:ss]` UTC, in ms. */
const at = (time: string): number => Date.parse(`2026-01-05T${time.length === 5 ? `${time}:00` : time}Z`)
const T0 = at('10:00:30')

type RunImpl = (
  task: TaskDefinition,
  trigger: RunRecord['trigger'],
  signal: AbortSignal,
) => Promise<RunRecord>

const completed =
  (clock: FakeClock): RunImpl =>
  async (_task, trigger) => ({
    at: new Date(clock.now()).toISOString(),
    trigger,
    outcome: 'completed',
    durationMs: 5,
  })

const live: Scheduler[] = []
afterEach(async () => {
  for (const scheduler of live.splice(0)) await scheduler.stop()
})

interface Harness {
  readonly paths: SchedulerPaths
  readonly clock: FakeClock
  readonly runs: { id: string; trigger: string; at: number }[]
  readonly records: { id: string; record: RunRecord }[]
  readonly events: { event: string; id?: string; [key: string]: unknown }[]
  readonly syncs: SyncReport[]
  runImpl: RunImpl
  preflight: (() => Promise<void>) | undefined
  create(extra?: Partial<SchedulerOptions>): Scheduler
}

/**
 * A stack with `hourly` (every hour), `enabled` in scheduler.enabled of config/akm/config.json
 * and `timezone` in sallyport.json.
 */
function harness(enabled: readonly string[] = ['hourly'], timezone = 'UTC'): Harness {
  const paths = makeStack(tempDir(), { enabled, stackConfig: { version: 1, assistant: { timezone } } })
  writeTask(paths, 'hourly', 'schedule: "0 * * * *"\n')
  const clock = new FakeClock(T0)
  const h: Harness = {
    paths,
    clock,
    runs: [],
    records: [],
    events: [],
    syncs: [],
    runImpl: completed(clock),
    preflight: undefined,
    create(extra = {}) {
      const scheduler = createScheduler({
        paths,
        clock,
        run: (task, trigger, signal) => {
          h.runs.push({ id: task.id, trigger, at: clock.now() })
          return h.runImpl(task, trigger, signal)
        },
        record: async (id, record) => {
          h.records.push({ id, record })
        },
        preflight: () => h.preflight?.() ?? Promise.resolve(),
        onEvent: (event) => h.events.push(event),
        onSync: (report) => h.syncs.push(report),
        ...extra,
      })
      live.push(scheduler)
      return scheduler
    },
  }
  return h
}

const boundOf = (report: SyncReport) => (report.ok ? report.bound : undefined)

describe('createScheduler: timing', () => {
  it('a task bound at start fires at its slot, not before, and again at the next one', async () => {
    const h = harness()
    const scheduler = h.create()
    const report = await scheduler.start()
    expect(report).toMatchObject({ ok: true, timezone: 'UTC', paused: [], manual: [], invalid: [] })
    expect(boundOf(report)).toEqual([{ id: 'hourly', next: '2026-01-05T11:00:00.000Z' }])
    expect(scheduler.status().healthy).toBe(true)

    await h.clock.advanceTo(at('11:00') - 1)
    expect(h.runs).toEqual([])
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs).toEqual([{ id: 'hourly', trigger: 'schedule', at: at('11:00') }])
    await pollUntil(() => h.records.length === 1, 'the run to be recorded')
    expect(h.records[0]).toEqual({
      id: 'hourly',
      record: { at: '2026-01-05T11:00:00.000Z', trigger: 'schedule', outcome: 'completed', durationMs: 5 },
    })
    expect(h.events.map((e) => e.event)).toEqual(['task_run_started', 'task_run_finished'])

    await h.clock.advanceTo(at('11:59:59'))
    expect(h.runs).toHaveLength(1)
    await h.clock.advanceTo(at('12:00'))
    expect(h.runs.map((run) => run.at)).toEqual([at('11:00'), at('12:00')])
  })

  it('no replay after downtime: a new scheduler runs only the next future slot', async () => {
    const h = harness()
    const first = h.create()
    await first.start()
    await first.stop()
    expect(h.clock.pending).toBe(0)

    h.clock.jump(3 * 3600_000) // down from 10:00:30 to 13:00:30: 11:00, 12:00 and 13:00 missed
    const second = h.create()
    const report = await second.start()
    expect(boundOf(report)).toEqual([{ id: 'hourly', next: '2026-01-05T14:00:00.000Z' }])
    await h.clock.advanceTo(at('13:59:59'))
    expect(h.runs).toEqual([])
    await h.clock.advanceTo(at('14:00'))
    expect(h.runs.map((run) => run.at)).toEqual([at('14:00')])
  })

  it(`a slot reached more than ${LATE_TOLERANCE_MS} ms late is missed, not run`, async () => {
    const h = harness()
    await h.create().start()
    await h.clock.advanceTo(at('10:59:30'))
    // The host sleeps through 11:00; its timer comes back 60.001 s late.
    h.clock.jump(at('11:00') + LATE_TOLERANCE_MS + 1 - h.clock.now())
    h.clock.fireDue()
    expect(h.runs).toEqual([])
    expect(h.events).toContainEqual({
      event: 'task_slot_missed',
      id: 'hourly',
      slot: '2026-01-05T11:00:00.000Z',
    })
    await h.clock.advanceTo(at('11:59:59'))
    expect(h.runs).toEqual([])
    await h.clock.advanceTo(at('12:00'))
    expect(h.runs.map((run) => run.at)).toEqual([at('12:00')])
  })

  it(`a slot reached exactly ${LATE_TOLERANCE_MS} ms late still runs (once)`, async () => {
    const h = harness()
    await h.create().start()
    await h.clock.advanceTo(at('10:59:30'))
    h.clock.jump(at('11:00') + LATE_TOLERANCE_MS - h.clock.now())
    h.clock.fireDue()
    expect(h.runs).toEqual([{ id: 'hourly', trigger: 'schedule', at: at('11:01') }])
    await h.clock.advanceTo(at('11:59'))
    expect(h.runs).toHaveLength(1)
  })

  it('fires in the host time zone, across a DST change (Europe/Berlin 2026-03-29)', async () => {
    const h = harness(['night'], 'Europe/Berlin')
    writeTask(h.paths, 'night', 'schedule: "30 2 * * *"\n')
    h.clock.current = Date.parse('2026-03-28T23:00:00Z')
    const report = await h.create({ syncIntervalMs: 3600_000 }).start()
    expect(boundOf(report)).toEqual([{ id: 'night', next: '2026-03-29T01:00:00.000Z' }])
    await h.clock.advanceTo(Date.parse('2026-03-29T00:59:59.999Z'))
    expect(h.runs).toEqual([])
    await h.clock.advanceTo(Date.parse('2026-03-30T00:30:00Z'))
    expect(h.runs.map((run) => new Date(run.at).toISOString())).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ])
  })
})

describe('createScheduler: a wall clock stepped back', () => {
  it('an hour back: the periodic sync is not postponed by the step (it comes within one interval, not an hour later)', async () => {
    const h = harness([])
    const scheduler = h.create()
    await scheduler.start()
    // Right after the start (a sync at 10:00:30), an NTP correction steps the clock back an hour.
    h.clock.stepWallClock(-3600_000)
    const stepped = h.clock.now()
    await setTaskEnabled(h.paths, 'hourly', true)
    await h.clock.advanceTo(stepped + SYNC_INTERVAL_MS)
    await pollUntil(() => h.syncs.length >= 2, 'a periodic sync after the step')
    expect(Date.parse(h.syncs[1]?.at ?? '')).toBeLessThanOrEqual(stepped + SYNC_INTERVAL_MS)
    expect(boundOf(h.syncs[1]!)).toEqual([{ id: 'hourly', next: '2026-01-05T10:00:00.000Z' }])
    await h.clock.advanceTo(at('10:00'))
    expect(h.runs.map((run) => run.at)).toEqual([at('10:00')])
  })

  // A wall clock stepped back: the next tick syncs at once instead of waiting out the step.
  it('an hour back: the next periodic sync comes within ONE interval of the step', async () => {
    const h = harness([])
    await h.create().start()
    h.clock.stepWallClock(-3600_000)
    const stepped = h.clock.now()
    await h.clock.advanceTo(stepped + SYNC_INTERVAL_MS)
    await new Promise<void>((resolve) => setTimeout(resolve, 50))
    expect(h.syncs.length).toBeGreaterThanOrEqual(2)
  })
})

describe('createScheduler: activation', () => {
  it('a valid scheduled task not in scheduler.enabled never fires; after setTaskEnabled + sync it does', async () => {
    const h = harness([])
    const scheduler = h.create()
    const report = await scheduler.start()
    expect(report).toMatchObject({ ok: true, bound: [], paused: ['hourly'] })
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs).toEqual([])

    await setTaskEnabled(h.paths, 'hourly', true)
    expect(boundOf(await scheduler.sync())).toEqual([{ id: 'hourly', next: '2026-01-05T12:00:00.000Z' }])
    await h.clock.advanceTo(at('12:00'))
    expect(h.runs.map((run) => run.at)).toEqual([at('12:00')])
  })

  it('reads activation from config/akm/config.json only: scheduler.enabled in sallyport.json is ignored', async () => {
    const h = harness([])
    writeStackConfig(h.paths, { ...DEFAULT_STACK_CONFIG, scheduler: { enabled: ['hourly'] } })
    const scheduler = h.create()
    expect(await scheduler.start()).toMatchObject({ ok: true, bound: [], paused: ['hourly'] })
    writeEnabled(h.paths, ['hourly'])
    expect(boundOf(await scheduler.sync())).toEqual([{ id: 'hourly', next: '2026-01-05T11:00:00.000Z' }])
  })

  it('the periodic sync picks up an activation within a minute', async () => {
    const h = harness([])
    await h.create().start()
    await setTaskEnabled(h.paths, 'hourly', true)
    await h.clock.advanceTo(at('10:01:30'))
    await pollUntil(() => h.syncs.length >= 2, 'the periodic sync')
    expect(boundOf(h.syncs.at(-1)!)).toEqual([{ id: 'hourly', next: '2026-01-05T11:00:00.000Z' }])
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs).toHaveLength(1)
  })

  it('a task paused after a sync stops firing', async () => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    await setTaskEnabled(h.paths, 'hourly', false)
    expect(await scheduler.sync()).toMatchObject({ ok: true, bound: [], paused: ['hourly'] })
    await h.clock.advanceTo(at('12:00'))
    expect(h.runs).toEqual([])
  })

  it('a removed or broken source is unbound; the others stay bound', async () => {
    const h = harness(['hourly', 'half', 'gone'])
    writeTask(h.paths, 'half', 'schedule: "30 * * * *"\n')
    writeTask(h.paths, 'gone', 'schedule: "15 * * * *"\n')
    writeTask(h.paths, 'manual')
    const scheduler = h.create()
    expect(await scheduler.start()).toMatchObject({
      bound: [
        { id: 'gone', next: '2026-01-05T10:15:00.000Z' },
        { id: 'half', next: '2026-01-05T10:30:00.000Z' },
        { id: 'hourly', next: '2026-01-05T11:00:00.000Z' },
      ],
      manual: ['manual'],
    })
    rmSync(join(h.paths.tasksDir, 'gone.yml'))
    writeFileSync(
      join(h.paths.tasksDir, 'half.yml'),
      'version: 1\nschedule: "30 * * * *"\nprompt: x\nenabled: true\n',
    )
    const report = await scheduler.sync()
    expect(report).toMatchObject({
      ok: true,
      bound: [{ id: 'hourly' }],
      invalid: [{ file: 'half.yml', id: 'half' }],
    })
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs.map((run) => run.id)).toEqual(['hourly'])
  })

  it('a changed schedule or time zone is rebound; an unchanged one keeps its slot', async () => {
    const h = harness(['morning'])
    writeTask(h.paths, 'morning', 'schedule: "0 7 * * *"\n')
    const scheduler = h.create()
    expect(boundOf(await scheduler.start())).toEqual([{ id: 'morning', next: '2026-01-06T07:00:00.000Z' }])
    writeStackConfig(h.paths, { ...DEFAULT_STACK_CONFIG, assistant: { timezone: 'Europe/Berlin' } })
    expect(await scheduler.sync()).toMatchObject({
      timezone: 'Europe/Berlin',
      bound: [{ id: 'morning', next: '2026-01-06T06:00:00.000Z' }],
    })
    writeTask(h.paths, 'morning', 'schedule: "30 * * * *"\n')
    expect(boundOf(await scheduler.sync())).toEqual([{ id: 'morning', next: '2026-01-05T10:30:00.000Z' }])
  })

  it('sync(true) recomputes every next slot from now; sync(false) keeps it', async () => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    h.clock.jump(2 * 3600_000) // 12:00:30, no timer ran
    expect(boundOf(await scheduler.sync(false))).toEqual([{ id: 'hourly', next: '2026-01-05T11:00:00.000Z' }])
    expect(boundOf(await scheduler.sync(true))).toEqual([{ id: 'hourly', next: '2026-01-05T13:00:00.000Z' }])
  })
})

describe('createScheduler: overlap, failures, health', () => {
  it('a slot that finds the previous run still going is recorded skipped', async () => {
    const h = harness(['minutely'])
    writeTask(h.paths, 'minutely', 'schedule: "* * * * *"\n')
    const release = deferred<RunRecord>()
    h.runImpl = () => release.promise
    const scheduler = h.create()
    await scheduler.start()
    await h.clock.advanceTo(at('10:01'))
    expect(h.runs).toHaveLength(1)
    expect(scheduler.status().running).toEqual(['minutely'])

    await h.clock.advanceTo(at('10:02'))
    await pollUntil(() => h.records.length === 1, 'the skipped record')
    expect(h.runs).toHaveLength(1)
    expect(h.records[0]).toEqual({
      id: 'minutely',
      record: { at: '2026-01-05T10:02:00.000Z', trigger: 'schedule', outcome: 'skipped', durationMs: 0 },
    })
    expect(h.events).toContainEqual({ event: 'task_run_skipped', id: 'minutely' })

    release.resolve({
      at: new Date(at('10:01')).toISOString(),
      trigger: 'schedule',
      outcome: 'completed',
      durationMs: 90_000,
    })
    await pollUntil(() => h.records.length === 2, 'the finished run')
    expect(scheduler.status().running).toEqual([])
    h.runImpl = completed(h.clock)
    await h.clock.advanceTo(at('10:03'))
    expect(h.runs.map((run) => run.at)).toEqual([at('10:01'), at('10:03')])
  })

  it.each([
    ['config/akm/config.json', 'engineConfig'],
    ['sallyport.json', 'stackConfig'],
  ] as const)('a sync that cannot read %s makes it unhealthy and keeps the bindings', async (name, key) => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    const good = readFileSync(h.paths[key], 'utf8')
    writeFileSync(h.paths[key], '{ not json')
    const failed = await scheduler.sync()
    expect(failed).toEqual({
      ok: false,
      at: new Date(T0).toISOString(),
      error: `${name} is not valid JSON`,
    })
    expect(scheduler.status()).toEqual({ healthy: false, lastSync: failed, running: [] })

    await h.clock.advanceTo(at('11:00'))
    expect(h.runs.map((run) => run.at)).toEqual([at('11:00')])
    expect(scheduler.status().healthy).toBe(false)

    writeFileSync(h.paths[key], good)
    expect((await scheduler.sync()).ok).toBe(true)
    expect(scheduler.status().healthy).toBe(true)
  })

  it('a failed sync still drops a task paused meanwhile (pause always stops a task); the others stay bound', async () => {
    const h = harness(['minutely', 'hourly'])
    writeTask(h.paths, 'minutely', 'schedule: "* * * * *"\n')
    const scheduler = h.create()
    expect(boundOf(await scheduler.start())).toHaveLength(2)
    await h.clock.advanceTo(at('10:01'))
    expect(h.runs.map((run) => run.id)).toEqual(['minutely'])

    writeStackConfig(h.paths, { version: 1, assistant: { timezone: 'Mars/Olympus' } })
    await setTaskEnabled(h.paths, 'minutely', false)
    expect(await scheduler.sync()).toMatchObject({
      ok: false,
      error: 'assistant.timezone in sallyport.json is not an IANA time zone',
    })
    expect(scheduler.status().healthy).toBe(false)
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs.map((run) => [run.id, run.at])).toEqual([
      ['minutely', at('10:01')],
      ['hourly', at('11:00')],
    ])
    expect(scheduler.status().healthy).toBe(false)
  })

  it('a failed sync drops a removed task too (its source gone and its activation dropped)', async () => {
    const h = harness(['minutely', 'hourly'])
    writeTask(h.paths, 'minutely', 'schedule: "* * * * *"\n')
    const scheduler = h.create()
    await scheduler.start()
    h.preflight = async () => {
      throw new SchedulerError('ERR_SCHEDULER_CONFIG', 'config/akm/config.json: provider missing')
    }
    rmSync(join(h.paths.tasksDir, 'minutely.yml'))
    writeEnabled(h.paths, ['hourly'])
    expect((await scheduler.sync()).ok).toBe(false)
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs.map((run) => run.id)).toEqual(['hourly'])
  })

  it('a failed sync whose activation cannot be read either keeps every binding', async () => {
    const h = harness(['minutely'])
    writeTask(h.paths, 'minutely', 'schedule: "* * * * *"\n')
    const scheduler = h.create()
    await scheduler.start()
    writeFileSync(h.paths.engineConfig, '{ not json')
    expect((await scheduler.sync()).ok).toBe(false)
    await h.clock.advanceTo(at('10:02'))
    expect(h.runs.map((run) => run.at)).toEqual([at('10:01'), at('10:02')])
  })

  it('a FIFO at sallyport.json fails the sync at once instead of hanging it; the bindings stay', async () => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    unlinkSync(h.paths.stackConfig)
    expect(spawnSync('mkfifo', ['-m', '600', h.paths.stackConfig]).status).toBe(0)
    expect(await scheduler.sync()).toMatchObject({
      ok: false,
      error: 'cannot read sallyport.json (sallyport.json is not a regular file)',
    })
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs).toHaveLength(1)
  })

  it(`a sync that never settles fails after ${SYNC_TIMEOUT_MS} ms; the timer stays armed and slots fire`, async () => {
    const h = harness(['minutely'])
    writeTask(h.paths, 'minutely', 'schedule: "* * * * *"\n')
    const scheduler = h.create()
    await scheduler.start()
    expect(scheduler.status().healthy).toBe(true)
    h.preflight = () => new Promise<void>(() => {})
    let settled: SyncReport | undefined
    const hung = scheduler.sync()
    void hung.then((report) => {
      settled = report
    })
    await h.clock.advanceTo(T0 + SYNC_TIMEOUT_MS - 1)
    expect(settled).toBeUndefined()
    expect(scheduler.status().healthy).toBe(true)

    await h.clock.advanceTo(T0 + SYNC_TIMEOUT_MS)
    const report = await hung
    expect(report).toEqual({
      ok: false,
      at: new Date(T0 + SYNC_TIMEOUT_MS).toISOString(),
      error: 'the sync did not finish within 30 s',
    })
    expect(scheduler.status()).toMatchObject({ healthy: false, lastSync: report })
    expect(h.syncs.at(-1)).toEqual(report)

    // The periodic syncs hang as well; the slots fire regardless.
    await h.clock.advanceTo(at('10:04'))
    expect(h.runs.map((run) => run.at)).toEqual([at('10:01'), at('10:02'), at('10:03'), at('10:04')])
    expect(scheduler.status().healthy).toBe(false)
    expect(h.syncs.filter((sync) => !sync.ok).length).toBeGreaterThanOrEqual(3)

    // And the next sync that can finish makes it healthy again.
    h.preflight = undefined
    await h.clock.advanceTo(at('10:06'))
    await pollUntil(() => scheduler.status().healthy, 'a good periodic sync')
  })

  it('a sync requested while one hangs runs after its timeout', async () => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    h.preflight = () => new Promise<void>(() => {})
    const hung = scheduler.sync()
    await Promise.resolve()
    h.preflight = undefined
    const next = scheduler.sync()
    await h.clock.advanceTo(T0 + SYNC_TIMEOUT_MS)
    expect(await hung).toMatchObject({ ok: false, error: 'the sync did not finish within 30 s' })
    expect(await next).toMatchObject({ ok: true, bound: [{ id: 'hourly' }] })
    expect(scheduler.status().healthy).toBe(true)
  })

  it.each([
    ['true', true],
    ['false', false],
  ])('scheduler.enabled: %s in config/akm/config.json fails the sync', async (_, value) => {
    const h = harness()
    const scheduler = h.create()
    expect((await scheduler.start()).ok).toBe(true)
    writeHostConfig(h.paths, { ...readHostConfig(h.paths), scheduler: { enabled: value } })
    const report = await scheduler.sync()
    expect(report).toMatchObject({ ok: false })
    expect(report.ok ? '' : report.error).toContain('scheduler.enabled in config/akm/config.json')
    expect(scheduler.status().healthy).toBe(false)
  })

  it('a preflight that throws fails the sync and keeps the bindings', async () => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    h.preflight = async () => {
      throw new SchedulerError('ERR_SCHEDULER_CONFIG', 'config/akm/config.json is not valid JSON')
    }
    expect(await scheduler.sync()).toMatchObject({
      ok: false,
      error: 'config/akm/config.json is not valid JSON',
    })
    expect(scheduler.status().healthy).toBe(false)
    h.preflight = async () => {
      throw Object.assign(new Error('/private/path/secret'), { code: 'EACCES' })
    }
    const report = await scheduler.sync()
    expect(report).toMatchObject({ ok: false, error: 'cannot be read (EACCES)' })
    expect(JSON.stringify(report)).not.toContain('/private/path')
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs).toHaveLength(1)
    h.preflight = undefined
    await h.clock.advanceTo(at('11:01:30'))
    await pollUntil(() => scheduler.status().healthy, 'a good periodic sync')
  })

  it('is unhealthy before the first sync and after a failed first sync, and recovers on a periodic sync', async () => {
    const h = harness()
    writeFileSync(h.paths.stackConfig, '[]')
    const scheduler = h.create()
    expect(scheduler.status()).toEqual({ healthy: false, running: [] })
    const report = await scheduler.start()
    expect(report).toMatchObject({ ok: false, error: 'sallyport.json is not a JSON object' })
    expect(h.clock.pending).toBe(1)
    writeStackConfig(h.paths, DEFAULT_STACK_CONFIG)
    await h.clock.advanceTo(at('10:01:30'))
    await pollUntil(() => scheduler.status().healthy, 'the periodic sync')
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs).toHaveLength(1)
  })

  it('reports invalid sources in a healthy sync', async () => {
    const h = harness()
    writeTask(h.paths, 'broken', 'schedule: "* * * * * *"\n')
    const report = await h.create().start()
    expect(report).toMatchObject({ ok: true, invalid: [{ file: 'broken.yml', id: 'broken' }] })
  })

  it('a source whose output lands in a reserved place for its id is invalid, never bound or run', async () => {
    const h = harness(['hourly', 'secrets'])
    writeTask(h.paths, 'secrets', 'schedule: "0 * * * *"\noutput: "{id}/leak.md"\n')
    const scheduler = h.create()
    const report = await scheduler.start()
    expect(report).toMatchObject({
      ok: true,
      bound: [{ id: 'hourly' }],
      invalid: [{ file: 'secrets.yml', id: 'secrets', problem: expect.stringContaining('output') }],
    })
    expect((await schedulerErrorOf(scheduler.runNow('secrets'))).code).toBe('ERR_SCHEDULER_INVALID_TASK')
    await h.clock.advanceTo(at('11:00'))
    expect(h.runs.map((run) => run.id)).toEqual(['hourly'])
  })

  it('a failing history write is reported as an event and does not stop the scheduler', async () => {
    const h = harness()
    const scheduler = h.create({
      record: async () => {
        throw new Error('disk full')
      },
    })
    await scheduler.start()
    await h.clock.advanceTo(at('11:00'))
    await pollUntil(() => h.events.some((e) => e.event === 'task_history_failed'), 'the history failure')
    await h.clock.advanceTo(at('12:00'))
    expect(h.runs).toHaveLength(2)
  })
})

describe('createScheduler: runNow and stop', () => {
  it('runs a task now (manual trigger), whatever its activation', async () => {
    const h = harness([])
    writeTask(h.paths, 'manual')
    const scheduler = h.create()
    await scheduler.start()
    expect(await scheduler.runNow('manual')).toMatchObject({ trigger: 'manual', outcome: 'completed' })
    expect(await scheduler.runNow('hourly')).toMatchObject({ trigger: 'manual' })
    expect(h.records.map((r) => [r.id, r.record.trigger])).toEqual([
      ['manual', 'manual'],
      ['hourly', 'manual'],
    ])
  })

  it('refuses an unknown id, an invalid task and a task that is running', async () => {
    const h = harness()
    writeTask(h.paths, 'broken', 'enabled: true\n')
    const scheduler = h.create()
    await scheduler.start()
    expect((await schedulerErrorOf(scheduler.runNow('nope'))).code).toBe('ERR_SCHEDULER_NOT_FOUND')
    const invalid = await schedulerErrorOf(scheduler.runNow('broken'))
    expect(invalid.code).toBe('ERR_SCHEDULER_INVALID_TASK')
    expect(invalid.message).toContain('scheduler.enabled')
    expect((await schedulerErrorOf(scheduler.runNow('../x'))).code).toBe('ERR_SCHEDULER_NOT_FOUND')

    const release = deferred<RunRecord>()
    h.runImpl = () => release.promise
    const first = scheduler.runNow('hourly')
    await pollUntil(() => scheduler.status().running.length === 1, 'the run to start')
    expect((await schedulerErrorOf(scheduler.runNow('hourly'))).code).toBe('ERR_SCHEDULER_EXISTS')
    release.resolve({ at: 'x', trigger: 'manual', outcome: 'completed', durationMs: 1 })
    expect((await first).outcome).toBe('completed')
  })

  it('two concurrent runNow of one task: exactly one run starts, the other is ERR_SCHEDULER_EXISTS', async () => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    const release = deferred<RunRecord>()
    h.runImpl = () => release.promise
    const first = scheduler.runNow('hourly')
    const second = scheduler.runNow('hourly')
    expect((await schedulerErrorOf(second)).code).toBe('ERR_SCHEDULER_EXISTS')
    await pollUntil(() => h.runs.length === 1, 'the run to start')
    expect(scheduler.status().running).toEqual(['hourly'])
    // Its entry stays while it runs: a slot meanwhile is skipped, not a second run.
    await h.clock.advanceTo(at('11:00'))
    await pollUntil(() => h.records.length === 1, 'the skipped slot')
    expect(h.records[0]?.record.outcome).toBe('skipped')
    expect(h.runs).toHaveLength(1)
    release.resolve({ at: 'x', trigger: 'manual', outcome: 'completed', durationMs: 1 })
    expect((await first).outcome).toBe('completed')
    await pollUntil(() => h.records.length === 2, 'the finished run')
    expect(scheduler.status().running).toEqual([])
    h.runImpl = completed(h.clock)
    expect((await scheduler.runNow('hourly')).outcome).toBe('completed')
  })

  it('a slot that starts the task while runNow reads the catalog makes runNow refuse; the slot run keeps its entry', async () => {
    const h = harness(['minutely'])
    writeTask(h.paths, 'minutely', 'schedule: "* * * * *"\n')
    const scheduler = h.create()
    await scheduler.start()
    const release = deferred<RunRecord>()
    h.runImpl = () => release.promise
    const gate = deferred<void>()
    catalogGate.next = gate.promise
    const manual = scheduler.runNow('minutely')
    // runNow holds the id meanwhile: another runNow is refused at once.
    expect((await schedulerErrorOf(scheduler.runNow('minutely'))).code).toBe('ERR_SCHEDULER_EXISTS')
    await h.clock.advanceTo(at('10:01'))
    expect(h.runs).toEqual([{ id: 'minutely', trigger: 'schedule', at: at('10:01') }])
    gate.resolve()
    expect((await schedulerErrorOf(manual)).code).toBe('ERR_SCHEDULER_EXISTS')
    expect(scheduler.status().running).toEqual(['minutely'])
    expect(h.runs).toHaveLength(1)
    release.resolve({ at: 'x', trigger: 'schedule', outcome: 'completed', durationMs: 1 })
    await pollUntil(() => scheduler.status().running.length === 0, 'the slot run to finish')
    expect(h.records.map((r) => r.record.outcome)).toEqual(['completed'])
  })

  it('a runNow whose catalog read fails releases the id', async () => {
    const h = harness()
    const scheduler = h.create()
    await scheduler.start()
    rmSync(h.paths.tasksDir, { recursive: true })
    writeFileSync(h.paths.tasksDir, 'not a directory')
    const error = await schedulerErrorOf(scheduler.runNow('hourly'))
    expect(error.code).not.toBe('ERR_SCHEDULER_EXISTS')
    rmSync(h.paths.tasksDir)
    mkdirSync(h.paths.tasksDir)
    writeTask(h.paths, 'hourly', 'schedule: "0 * * * *"\n')
    expect((await scheduler.runNow('hourly')).outcome).toBe('completed')
  })

  it('stop() aborts running runs, records them and clears the timer', async () => {
    const h = harness()
    h.runImpl = (_task, trigger, signal) =>
      new Promise((resolve) =>
        signal.addEventListener(
          'abort',
          () => resolve({ at: 'x', trigger, outcome: 'cancelled', durationMs: 1 }),
          { once: true },
        ),
      )
    const scheduler = h.create()
    await scheduler.start()
    await h.clock.advanceTo(at('11:00'))
    writeTask(h.paths, 'other')
    const pending = scheduler.runNow('other')
    await pollUntil(() => scheduler.status().running.length === 2, 'both runs')
    await scheduler.stop()
    expect((await pending).outcome).toBe('cancelled')
    expect(scheduler.status().running).toEqual([])
    expect(h.records.map((r) => [r.id, r.record.outcome]).sort()).toEqual([
      ['hourly', 'cancelled'],
      ['other', 'cancelled'],
    ])
    expect(h.clock.pending).toBe(0)
    h.clock.jump(3600_000)
    h.clock.fireDue()
    expect(h.runs).toHaveLength(2)
  })
})
