import type { SchedulerStatus } from '@sallyport/scheduler'
import { askScheduler, SchedulerError, schedulerPaths } from '@sallyport/scheduler/stack'
import type { StackLayout } from '../../stack/layout.ts'
import { type Check, check } from './check.ts'

/**
 * `scheduler`: the engine configuration is valid; the running scheduler's last task sync
 * succeeded (a failed sync marks the assistant runtime unhealthy until one succeeds: fail); it is
 * not running (warn); `tasks`: every task source is valid (an invalid one is reported, never
 * blocking the others: warn).
 */
export async function schedulerChecks(
  layout: StackLayout,
  ask: (
    path: string,
    request: { op: 'status' },
    timeoutMs: number,
  ) => Promise<SchedulerStatus> = askScheduler,
): Promise<Check[]> {
  // The scheduler's root (the engine configuration's schema, the task sources' yaml) is loaded
  // when `doctor` runs, not with the CLI.
  const { readEngineConfig, readTaskCatalog } = await import('@sallyport/scheduler')
  const paths = schedulerPaths(layout.root)
  const out: Check[] = []
  let engineProblem: string | undefined
  try {
    await readEngineConfig(paths)
  } catch (error) {
    engineProblem = SchedulerError.isInstance(error) ? error.message : String(error)
  }
  let status: SchedulerStatus | undefined
  try {
    status = await ask(paths.socket, { op: 'status' }, 3000)
  } catch {
    status = undefined
  }
  const sync = status?.lastSync
  if (status && !status.healthy)
    out.push(
      check(
        'scheduler',
        'fail',
        `the last task sync failed${sync && !sync.ok ? `: ${sync.error}` : ''}; the assistant runtime counts as unhealthy until a sync succeeds`,
        'fix the file named, then run `sallyport task sync` (the scheduler also retries every 60 s)',
      ),
    )
  else if (engineProblem)
    out.push(
      check(
        'scheduler',
        'fail',
        engineProblem,
        'restore config/akm/config.json (`sallyport init` writes the default when it is missing)',
      ),
    )
  else if (status && sync?.ok)
    out.push(
      check(
        'scheduler',
        'ok',
        `running; last sync ${sync.at}: ${sync.bound.length} scheduled, ${sync.paused.length} paused, ${sync.manual.length} manual (time zone ${sync.timezone})`,
      ),
    )
  else out.push(check('scheduler', 'warn', 'not running', 'start the stack with `sallyport up`'))

  try {
    const catalog = await readTaskCatalog(paths)
    if (catalog.invalid.length === 0)
      out.push(
        check(
          'tasks',
          'ok',
          `${catalog.tasks.length} valid task source${catalog.tasks.length === 1 ? '' : 's'}`,
        ),
      )
    else
      out.push(
        check(
          'tasks',
          'warn',
          `${catalog.invalid.length} invalid (not scheduled): ${catalog.invalid
            .slice(0, 5)
            .map((bad) => `knowledge/tasks/${bad.file}: ${bad.problem}`)
            .join('; ')}`,
          'see `sallyport task validate`',
        ),
      )
  } catch (error) {
    out.push(
      check(
        'tasks',
        'fail',
        SchedulerError.isInstance(error) ? error.message : String(error),
        'check the permissions of knowledge/tasks/',
      ),
    )
  }
  return out
}
