import { readEnabled, readHostSettings } from './activation.ts'
import { SchedulerError } from './errors.ts'
import type { RunRecord } from './history.ts'
import type { SchedulerPaths } from './paths.ts'
import { type CompiledSchedule, compileSchedule } from './schedule.ts'
import { type InvalidTask, problemOf, readTaskCatalog } from './task-files.ts'
import type { TaskDefinition } from './task-source.ts'

/** The clock the scheduler reads and sets timers on (injected in tests). */
export interface SchedulerClock {
  now(): number
  setTimer(callback: () => void, ms: number): unknown
  clearTimer(handle: unknown): void
}

export const systemClock: SchedulerClock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => {
    const timer = setTimeout(callback, ms)
    timer.unref?.()
    return timer
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

/** Reconciliation interval (spec: at startup and every 60 seconds). */
export const SYNC_INTERVAL_MS = 60_000
/**
 * A slot the timer reaches later than this (a suspended host, a blocked event loop) is missed,
 * not run: missed slots are never replayed.
 */
export const LATE_TOLERANCE_MS = 60_000
/** A sync that takes longer fails (the scheduler turns unhealthy) instead of holding the others. */
export const SYNC_TIMEOUT_MS = 30_000

/** What one reconciliation did. */
export type SyncReport =
  | {
      readonly ok: true
      readonly at: string
      readonly timezone: string
      /** Scheduled now, with their next slot (ISO). */
      readonly bound: readonly { readonly id: string; readonly next: string }[]
      readonly paused: readonly string[]
      readonly manual: readonly string[]
      readonly invalid: readonly InvalidTask[]
    }
  | { readonly ok: false; readonly at: string; readonly error: string }

/** What `status` reports (the control socket, `/health`, `doctor`). */
export interface SchedulerStatus {
  /** False from the first failed sync until one succeeds (also before the first sync). */
  readonly healthy: boolean
  readonly lastSync?: SyncReport
  readonly running: readonly string[]
}

export interface SchedulerOptions {
  readonly paths: Pick<SchedulerPaths, 'tasksDir' | 'stackConfig' | 'engineConfig'>
  /** Runs one task; must not throw (see `runTask`). */
  readonly run: (
    task: TaskDefinition,
    trigger: RunRecord['trigger'],
    signal: AbortSignal,
  ) => Promise<RunRecord>
  /** Called with every finished or skipped run (appends to the history). */
  readonly record: (id: string, record: RunRecord) => Promise<void>
  readonly clock?: SchedulerClock
  readonly syncIntervalMs?: number
  /** Extra checks of a sync (the engine configuration); a throw fails the sync. */
  readonly preflight?: () => Promise<void>
  readonly onSync?: (report: SyncReport) => void
  readonly onEvent?: (event: { event: string; id?: string; [key: string]: unknown }) => void
}

interface Binding {
  task: TaskDefinition
  schedule: CompiledSchedule
  nextAt: number
}

/**
 * The in-process cron: reconciles the task sources with the host-local activation at start and
 * every `syncIntervalMs`, keeps one timer for the nearest slot or sync, and runs due tasks (one
 * run per task at a time: a slot that finds the previous run still going is recorded `skipped`).
 * Next slots are always computed from "now", so slots missed while the scheduler was down (or
 * late beyond {@link LATE_TOLERANCE_MS}) are never replayed.
 */
export function createScheduler(options: SchedulerOptions) {
  const clock = options.clock ?? systemClock
  const interval = options.syncIntervalMs ?? SYNC_INTERVAL_MS
  const bindings = new Map<string, Binding>()
  const running = new Map<string, { controller: AbortController; done: Promise<RunRecord> }>()
  /** Ids a manual run is being prepared for (between the check and the start). */
  const starting = new Set<string>()
  let healthy = false
  let lastSync: SyncReport | undefined
  let nextSyncAt = Number.POSITIVE_INFINITY
  let timer: unknown
  let started = false
  let stopped = false
  let syncing: Promise<SyncReport> | undefined
  const emit = options.onEvent ?? (() => {})

  async function doSync(rebind: boolean): Promise<SyncReport> {
    const at = new Date(clock.now()).toISOString()
    let report: SyncReport
    try {
      await options.preflight?.()
      const [catalog, host] = await Promise.all([
        readTaskCatalog(options.paths),
        readHostSettings(options.paths),
      ])
      const seen = new Set<string>()
      const paused: string[] = []
      const manual: string[] = []
      const invalid: InvalidTask[] = [...catalog.invalid]
      const now = clock.now()
      for (const task of catalog.tasks) {
        if (task.schedule === undefined) {
          manual.push(task.id)
          continue
        }
        if (!host.enabled.has(task.id)) {
          paused.push(task.id)
          continue
        }
        const existing = bindings.get(task.id)
        const same =
          existing !== undefined &&
          !rebind &&
          existing.schedule.expression === task.schedule &&
          existing.schedule.timezone === host.timezone
        let schedule: CompiledSchedule
        try {
          schedule = same ? existing.schedule : compileSchedule(task.schedule, host.timezone)
        } catch (error) {
          invalid.push({ file: `${task.id}.yml`, id: task.id, problem: problemOf(error) })
          continue
        }
        const next = same ? existing.nextAt : schedule.nextAfter(new Date(now))?.getTime()
        if (next === undefined) {
          invalid.push({ file: `${task.id}.yml`, id: task.id, problem: 'schedule: never fires again' })
          continue
        }
        seen.add(task.id)
        bindings.set(task.id, { task, schedule, nextAt: next })
      }
      for (const id of [...bindings.keys()]) if (!seen.has(id)) bindings.delete(id)
      healthy = true
      report = {
        ok: true,
        at,
        timezone: host.timezone,
        bound: [...bindings.entries()]
          .map(([id, b]) => ({ id, next: new Date(b.nextAt).toISOString() }))
          .sort((a, b) => a.id.localeCompare(b.id)),
        paused,
        manual,
        invalid,
      }
    } catch (error) {
      // Bindings stay as they were (a failed read must not stop tasks that were fine), except
      // those no longer active: pause and remove stop a task also while syncs fail.
      healthy = false
      report = { ok: false, at, error: SchedulerError.isInstance(error) ? error.message : problemOf(error) }
      try {
        const enabled = await readEnabled(options.paths)
        for (const id of [...bindings.keys()]) if (!enabled.has(id)) bindings.delete(id)
      } catch {
        // the activation itself cannot be read: keep what was bound
      }
    }
    lastSync = report
    options.onSync?.(report)
    return report
  }

  function sync(rebind = false): Promise<SyncReport> {
    // One sync at a time; a request during one waits for it and then runs its own. A sync that
    // does not settle (a hung file system) fails after SYNC_TIMEOUT_MS instead of holding the rest.
    const previous = syncing ?? Promise.resolve(undefined)
    const next = previous.then(() => withTimeout(doSync(rebind)))
    syncing = next
    next.finally(() => {
      if (syncing === next) syncing = undefined
      if (started && !stopped) arm()
    })
    return next
  }

  function withTimeout(work: Promise<SyncReport>): Promise<SyncReport> {
    let handle: unknown
    const timeout = new Promise<SyncReport>((resolve) => {
      handle = clock.setTimer(() => {
        healthy = false
        const report: SyncReport = {
          ok: false,
          at: new Date(clock.now()).toISOString(),
          error: `the sync did not finish within ${SYNC_TIMEOUT_MS / 1000} s`,
        }
        lastSync = report
        options.onSync?.(report)
        resolve(report)
      }, SYNC_TIMEOUT_MS)
    })
    return Promise.race([work, timeout]).finally(() => clock.clearTimer(handle))
  }

  function startRun(task: TaskDefinition, trigger: RunRecord['trigger']): Promise<RunRecord> {
    const controller = new AbortController()
    emit({ event: 'task_run_started', id: task.id, trigger })
    const done: Promise<RunRecord> = options.run(task, trigger, controller.signal).then(async (record) => {
      if (running.get(task.id)?.done === done) running.delete(task.id)
      emit({
        event: 'task_run_finished',
        id: task.id,
        trigger,
        outcome: record.outcome,
        durationMs: record.durationMs,
      })
      await options
        .record(task.id, record)
        .catch((error: unknown) =>
          emit({ event: 'task_history_failed', id: task.id, error: problemOf(error) }),
        )
      return record
    })
    running.set(task.id, { controller, done })
    return done
  }

  function fireDue(): void {
    const now = clock.now()
    for (const [id, binding] of bindings) {
      if (binding.nextAt > now) continue
      const late = now - binding.nextAt
      const slot = binding.nextAt
      binding.nextAt = binding.schedule.nextAfter(new Date(now))?.getTime() ?? Number.POSITIVE_INFINITY
      if (late > LATE_TOLERANCE_MS) {
        emit({ event: 'task_slot_missed', id, slot: new Date(slot).toISOString() })
        continue
      }
      if (running.has(id)) {
        const skipped: RunRecord = {
          at: new Date(slot).toISOString(),
          trigger: 'schedule',
          outcome: 'skipped',
          durationMs: 0,
        }
        emit({ event: 'task_run_skipped', id })
        void options.record(id, skipped).catch(() => {})
        continue
      }
      void startRun(binding.task, 'schedule')
    }
  }

  function arm(): void {
    if (timer !== undefined) clock.clearTimer(timer)
    timer = undefined
    if (stopped) return
    let wake = nextSyncAt
    for (const binding of bindings.values()) wake = Math.min(wake, binding.nextAt)
    const delay = Math.max(0, Math.min(wake - clock.now(), interval))
    timer = clock.setTimer(tick, delay)
  }

  function tick(): void {
    timer = undefined
    if (stopped) return
    fireDue()
    // A wall clock stepped back must not postpone the next sync by the size of the step.
    if (nextSyncAt > clock.now() + interval) nextSyncAt = clock.now()
    if (clock.now() >= nextSyncAt) {
      nextSyncAt = clock.now() + interval
      void sync(false)
    }
    // Armed now, whatever the sync does: slots keep firing while a sync is slow.
    arm()
  }

  return {
    /** The first sync, then the timer. A failed first sync leaves the scheduler up and unhealthy. */
    async start(): Promise<SyncReport> {
      started = true
      nextSyncAt = clock.now() + interval
      return sync(false)
    },
    /** Reconciles now; `rebind` recomputes every binding's next slot from now. */
    sync,
    /**
     * Runs a task now (`task run`), whatever its schedule or activation. Refused while a run of
     * it is going. Resolves when the run ends.
     */
    async runNow(id: string): Promise<RunRecord> {
      if (running.has(id) || starting.has(id))
        throw new SchedulerError('ERR_SCHEDULER_EXISTS', `task ${id} is running already`)
      starting.add(id)
      let catalog: Awaited<ReturnType<typeof readTaskCatalog>>
      try {
        catalog = await readTaskCatalog(options.paths)
      } finally {
        starting.delete(id)
      }
      // A slot may have started it while the catalog was read.
      if (running.has(id)) throw new SchedulerError('ERR_SCHEDULER_EXISTS', `task ${id} is running already`)
      const task = catalog.tasks.find((t) => t.id === id)
      if (!task) {
        const bad = catalog.invalid.find((t) => t.id === id)
        throw bad
          ? new SchedulerError('ERR_SCHEDULER_INVALID_TASK', `task ${id} is invalid: ${bad.problem}`)
          : new SchedulerError('ERR_SCHEDULER_NOT_FOUND', `no task ${id}`)
      }
      return startRun(task, 'manual')
    },
    status(): SchedulerStatus {
      return { healthy, ...(lastSync !== undefined && { lastSync }), running: [...running.keys()] }
    },
    /** Stops the timer and cancels running runs (they end `cancelled` and are recorded). */
    async stop(): Promise<void> {
      stopped = true
      if (timer !== undefined) clock.clearTimer(timer)
      timer = undefined
      const pending = [...running.values()]
      for (const run of pending) run.controller.abort()
      await Promise.allSettled(pending.map((run) => run.done))
      await syncing?.catch(() => {})
    },
  }
}

export type Scheduler = ReturnType<typeof createScheduler>
