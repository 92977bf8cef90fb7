import { callScheduler } from './control.ts'
import { SchedulerError } from './errors.ts'
import type { SyncReport } from './scheduler.ts'
import type { Reconciler } from './task-helper.ts'

/**
 * The reconciler of the CLI and the assistant's task tools: asks the running scheduler to sync.
 * `deferred` when no scheduler runs; `ERR_SCHEDULER_RECONCILE` (and the change is rolled back)
 * when the sync fails or reports the changed task invalid.
 */
export function socketReconciler(socket: string): Reconciler {
  return async ({ id }) => {
    let report: SyncReport
    try {
      report = (await callScheduler(socket, { op: 'sync' }, 30_000)) as SyncReport
    } catch (error) {
      if (SchedulerError.isInstance(error) && error.code === 'ERR_SCHEDULER_UNAVAILABLE') return 'deferred'
      throw new SchedulerError(
        'ERR_SCHEDULER_RECONCILE',
        `the scheduler could not sync: ${(error as Error).message}; the change was rolled back`,
        {
          cause: error,
        },
      )
    }
    if (!report.ok)
      throw new SchedulerError(
        'ERR_SCHEDULER_RECONCILE',
        `the scheduler's sync failed (${report.error}); the change was rolled back`,
      )
    const bad = id === undefined ? undefined : report.invalid.find((task) => task.id === id)
    if (bad)
      throw new SchedulerError(
        'ERR_SCHEDULER_RECONCILE',
        `the scheduler refused ${id} (${bad.problem}); the change was rolled back`,
      )
    return 'applied'
  }
}
