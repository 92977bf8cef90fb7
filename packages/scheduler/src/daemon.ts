import { readFile } from 'node:fs/promises'
import { DEFAULT_RUNTIME_USERNAME } from '@sallyport/runtime-process'
import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import { type ControlResults, serveControl } from './control.ts'
import { readEngineConfig } from './engine-config.ts'
import { SchedulerError } from './errors.ts'
import { appendHistory } from './history.ts'
import { schedulerPaths } from './paths.ts'
import { runTask } from './run-task.ts'
import { createScheduler, type SchedulerClock, type SyncReport } from './scheduler.ts'
import { parseStackEnv } from './stack-env.ts'
import { checkTaskId } from './task-source.ts'

/** One structured log line (JSON on stdout): never a prompt, a password or an upstream id. */
export type SchedulerLog = (
  level: 'info' | 'warn' | 'error',
  fields: Record<string, unknown>,
  msg?: string,
) => void

export const jsonLog: SchedulerLog = (level, fields, msg) => {
  process.stdout.write(
    `${JSON.stringify({ level, time: new Date().toISOString(), name: 'scheduler', ...fields, ...(msg && { msg }) })}\n`,
  )
}

export interface DaemonOptions {
  /** The stack directory. */
  readonly root: string
  readonly log?: SchedulerLog
  /** Aborting stops the scheduler (running tasks end `cancelled`). */
  readonly signal: AbortSignal
  readonly clock?: SchedulerClock
  readonly syncIntervalMs?: number
}

/**
 * The scheduler process of a stack (`up` runs it and stops the stack when it exits): serves the
 * control socket, reconciles at start and every 60 s, and runs due tasks through the native
 * server with the `scheduled` profile. Its only secret is the native password, read from
 * `state/native-password` when a run needs it; provider credentials stay in the runtime. A failed
 * sync keeps it running, unhealthy, until a sync succeeds. Resolves when `signal` aborts.
 */
export async function runSchedulerDaemon(options: DaemonOptions): Promise<void> {
  const paths = schedulerPaths(options.root)
  const log = options.log ?? jsonLog
  let client: { key: string; client: UpstreamClient } | undefined

  const runtime = async (): Promise<{ client: UpstreamClient; agent: string }> => {
    const engine = await readEngineConfig(paths)
    const env = parseStackEnv(await readFile(paths.stackEnv, 'utf8'))
    const baseUrl = env.get('SALLYPORT_NATIVE_URL')
    const directory = env.get('SALLYPORT_WORKSPACE')
    if (!baseUrl || !directory)
      throw new SchedulerError(
        'ERR_SCHEDULER_CONFIG',
        'state/stack.env names no native server: start the stack with `sallyport up`',
      )
    // `up` always records the user name; the runtime's default stands in for a stack.env without it.
    const username = env.get('SALLYPORT_NATIVE_USERNAME') || DEFAULT_RUNTIME_USERNAME
    const password = (await readFile(engine.passwordFile, 'utf8')).trim()
    const key = `${baseUrl}\n${username}\n${directory}\n${password}`
    if (client?.key !== key) {
      client?.client.close()
      client = {
        key,
        client: createUpstreamClient({ baseUrl, username, password, directory, timeoutMs: 30_000 }),
      }
    }
    return { client: client.client, agent: engine.agent }
  }

  let healthy: boolean | undefined
  const scheduler = createScheduler({
    paths,
    ...(options.clock && { clock: options.clock }),
    ...(options.syncIntervalMs && { syncIntervalMs: options.syncIntervalMs }),
    preflight: async () => {
      await readEngineConfig(paths)
    },
    run: async (task, trigger, signal) => {
      try {
        const { client: upstream, agent } = await runtime()
        return await runTask({
          runtime: upstream,
          task,
          knowledgeDir: paths.knowledgeDir,
          trigger,
          signal,
          agent,
        })
      } catch (error) {
        return {
          at: new Date().toISOString(),
          trigger,
          outcome: 'failed',
          durationMs: 0,
          error: SchedulerError.isInstance(error)
            ? error.message
            : 'the engine could not attach to the native server',
        }
      }
    },
    record: (id, record) => appendHistory(paths, id, record),
    onSync: (report) => {
      logSync(log, report)
      if (healthy !== report.ok)
        log(
          report.ok ? 'info' : 'error',
          { event: 'scheduler_health', healthy: report.ok },
          report.ok ? 'scheduler healthy' : 'scheduler unhealthy until a sync succeeds',
        )
      healthy = report.ok
    },
    onEvent: (event) => log(event.event === 'task_slot_missed' ? 'warn' : 'info', event),
  })

  // Each answer is what `askScheduler` promises for its request.
  const control = await serveControl(paths.socket, async (request) => {
    switch (request.op) {
      case 'status':
        return scheduler.status() satisfies ControlResults['status']
      case 'sync':
        return scheduler.sync(request.rebind === true) satisfies Promise<ControlResults['sync']>
      case 'run':
        return scheduler.runNow(checkTaskId(request.id)) satisfies Promise<ControlResults['run']>
    }
  })
  log('info', { event: 'scheduler_started' }, 'scheduler started')
  try {
    await scheduler.start()
    if (!options.signal.aborted)
      await new Promise<void>((resolve) =>
        options.signal.addEventListener('abort', () => resolve(), { once: true }),
      )
  } finally {
    await scheduler.stop()
    await control.close()
    client?.client.close()
    log('info', { event: 'scheduler_stopped' }, 'scheduler stopped')
  }
}

function logSync(log: SchedulerLog, report: SyncReport): void {
  if (!report.ok) {
    log('error', { event: 'scheduler_sync_failed', error: report.error }, `task sync failed: ${report.error}`)
    return
  }
  for (const bad of report.invalid)
    log(
      'warn',
      { event: 'task_invalid', file: bad.file, problem: bad.problem },
      `invalid task knowledge/tasks/${bad.file}: ${bad.problem}`,
    )
  log('info', {
    event: 'scheduler_synced',
    bound: report.bound.length,
    paused: report.paused.length,
    manual: report.manual.length,
    invalid: report.invalid.length,
  })
}
