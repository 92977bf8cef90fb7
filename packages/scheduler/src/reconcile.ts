import { askScheduler } from './control.ts'
import { SchedulerError } from './errors.ts'
import type { SyncReport } from './scheduler.ts'
import type { Reconciler } from './task-helper.ts'

/**
 * The reconciler of the CLI and the assistant's task tools: asks the running scheduler to sync.
 * `deferred` when no scheduler runs. A change that ACTIVATES (create, resume, restore) is refused
 * with `ERR_SCHEDULER_RECONCILE`, and rolled back, when the sync fails or reports the task
 * invalid. A change that only deactivates (pause, remove) is never undone: it is the way to stop
 * a task, also while syncs fail (the scheduler drops what is no longer active even then).
 */
export function socketReconciler(socket: string): Reconciler {
  return async ({ id, activates }) => {
    let report: SyncReport
    try {
      report = await askScheduler(socket, { op: 'sync' }, 30_000)
    } catch (error) {
      if (SchedulerError.isInstance(error) && error.code === 'ERR_SCHEDULER_UNAVAILABLE') return 'deferred'
      if (activates === false) return 'deferred'
      throw new SchedulerError(
        'ERR_SCHEDULER_RECONCILE',
        `the scheduler could not sync: ${(error as Error).message}; the change was rolled back`,
        {
          cause: error,
        },
      )
    }
    if (typeof report !== 'object' || report === null) {
      if (activates === false) return 'deferred'
      throw new SchedulerError(
        'ERR_SCHEDULER_RECONCILE',
        'the scheduler gave no sync report; the change was rolled back',
      )
    }
    if (!report.ok && activates === false) return 'applied'
    if (!report.ok)
      throw new SchedulerError(
        'ERR_SCHEDULER_RECONCILE',
        `the scheduler's sync failed (${report.error}); the change was rolled back`,
      )
    const bad =
      id === undefined || activates === false ? undefined : report.invalid.find((task) => task.id === id)
    if (bad)
      throw new SchedulerError(
        'ERR_SCHEDULER_RECONCILE',
        `the scheduler refused ${id} (${bad.problem}); the change was rolled back`,
      )
    return 'applied'
  }
}
