import type { Logger } from '../logger.js'
import type { RuntimeWake } from '../runtime/port.js'
import { newestRun } from './derive-job-state.js'
import { deriveJob, type JobContext, type JobKey, keepCancelled, rememberStop } from './job-status.js'
import { readTurn } from './turn-reads.js'

// `job.cancel` answers `cancelled` only for a run that is stopped, and a job it answered so for
// stays `cancelled`. The runtime loses an abort that comes before it has begun the run (measured:
// a cancel 0.1 s after the start, the answer due 0.2 s later — 10 of 10 runs went on and
// completed), so one abort is not enough: the run is aborted again while it shows up live, until
// the runtime records its end. If the run finishes on its own first, that is the truth, and the
// cancel says so (`finished`) instead of claiming a cancel that did not happen.

/** How long `job.cancel` waits for the runtime to confirm the end of an aborted run. */
export const CANCEL_CONFIRM_MS = 15_000

/** How often a run that still shows up live is aborted again while the cancel waits. */
export const REABORT_MS = 250

export type CancelOutcome =
  /** The runtime recorded the abort (or the run never began and stays remembered as cancelled). */
  | 'cancelled'
  /** The run ended on its own (a final answer or an error) before any abort took. */
  | 'finished'

/** Who may be aborting or starting runs of a session in this process (`job.cancel`, `agent.run`). */
export interface SessionHold {
  has(sessionId: string): boolean
  add(sessionId: string): unknown
  delete(sessionId: string): unknown
}

/**
 * Aborts the job's run and waits (at most {@link CANCEL_CONFIRM_MS}) for the runtime to record
 * how it ended, aborting it again every {@link REABORT_MS} while it is live. `begun` says whether
 * the caller's read already saw the run begun (busy, or answered): an idle session with no answer
 * is then a run aborted before its first answer, not one still waiting to begin. A run that has
 * not begun by the deadline is answered `cancelled` and kept cancelled in the background
 * (`keepCancelled`), as before. The caller holds the session in `hold` for the whole call.
 */
export async function cancelRun(
  ctx: JobContext,
  sessionId: string,
  job: JobKey,
  hold: SessionHold,
  options: { begun: boolean; confirmMs?: number },
): Promise<CancelOutcome> {
  const now = ctx.now ?? Date.now
  const deadline = now() + (options.confirmMs ?? CANCEL_CONFIRM_MS)
  let begun = options.begun
  await ctx.runtime.abortSession(sessionId)
  let abortedAt = now()
  // An abort sent while the run was not live yet is presumably lost: abort again the moment it is.
  let abortedLive = begun
  for (let left = deadline - now(); left > 0; left = deadline - now()) {
    // One round: a check now and on every event, for at most REABORT_MS; then a fresh round (a
    // poll, so a run that shows no event is still looked at and aborted again).
    const verdict = await ctx.runtime.waitUntil(
      sessionId,
      async (wake?: RuntimeWake): Promise<CancelOutcome | undefined> => {
        const snapshot = await readTurn(ctx.runtime, sessionId, {
          ...(wake && { sequence: wake.sequence }),
          from: job.messageId,
        })
        // From the runtime's records alone: what this gateway remembers is no record of the end.
        const state = deriveJob(ctx, sessionId, job, snapshot, { ownCancels: false })
        const inferred = 'inferred' in state && state.inferred === true
        switch (state.state) {
          case 'cancelled':
            if (!inferred) return 'cancelled' // the runtime recorded the abort
            break
          case 'completed':
            // A final answer is the run's own end; a turn stopped by a refused tool call is ours
            // (the cancel rejects the asks a run waits on).
            return inferred ? 'cancelled' : 'finished'
          case 'failed':
            if (!inferred) return 'finished'
            break
          case 'missing':
            return 'cancelled'
        }
        const live = snapshot.status !== 'idle' && newestRun(snapshot.messages) === job.messageId
        const answered = snapshot.messages.some(
          (m) => m.info.role === 'assistant' && m.info.parentID === job.messageId,
        )
        if (live || answered) begun = true
        // An abort before the first answer leaves an idle session with no answer at all.
        if (!live && begun && !answered) return 'cancelled'
        if (live && (!abortedLive || now() - abortedAt >= REABORT_MS)) {
          abortedAt = now()
          abortedLive = true
          // The first abort also rejected the run's asks and its subagents; a repeat only aborts.
          await (ctx.runtime.abortRun ?? ctx.runtime.abortSession)(sessionId)
        }
        return undefined
      },
      { timeoutMs: Math.min(REABORT_MS, left) },
    )
    if (verdict === 'finished') return 'finished'
    if (verdict === 'cancelled') break
  }
  // Remembered, and aborted again should it show up live later (a run not begun by the deadline).
  keepCancelled(ctx, sessionId, job, hold)
  return 'cancelled'
}

/** What a run stopped for its credential's run events reads as (`error` of its `cancelled` status). */
export const RUN_EVENTS_STOP = Object.freeze({
  name: 'RateLimited',
  message:
    "Stopped by the gateway: this credential's runs made the runtime work far beyond their allowance (limits.runEventsPerSecond and runEventBurst; every streamed chunk counts). New runs are refused until the allowance is back.",
})

/** Where a stop is told (no id, no key). */
export type StopLogger = Pick<Logger, 'warn'>

/**
 * The counter of a run's runtime events: each count goes to `charge` (the run slot's `events`),
 * and once it answers that the credential is a whole burst in debt, the run is stopped as
 * `job.cancel` stops it — refusing new runs does not bound what the runs in progress make the
 * runtime do. Its job then reads `cancelled` with {@link RUN_EVENTS_STOP}. The session is held in
 * `hold` meanwhile; while someone else holds it (a cancel of the client's own, a run being started
 * there), the next event tries again. A `run_stopped` line is logged once the runtime has told
 * how the run ended: a run whose events came in with its end (an answer that arrived whole) is
 * over already, and is not said to be stopped.
 */
export function stopWhenOverdrawn(
  ctx: JobContext & { logger?: StopLogger },
  sessionId: string,
  job: JobKey,
  hold: SessionHold,
  charge: (events: number) => boolean,
): (events: number) => void {
  let stopping = false
  const told = (outcome: CancelOutcome | 'unknown'): void =>
    ctx.logger?.warn(
      { event: 'run_stopped', reason: 'run_events', username: ctx.principal.username, outcome },
      outcome === 'finished'
        ? 'run not stopped: it had ended before its credential overdrew its runtime events'
        : 'run stopped: its credential overdrew its runtime events',
    )
  return (events) => {
    if (!charge(events) || stopping || hold.has(sessionId)) return
    stopping = true
    hold.add(sessionId)
    rememberStop(ctx.runtime, sessionId, job, RUN_EVENTS_STOP)
    void cancelRun(ctx, sessionId, job, hold, { begun: true })
      .then(told, () => told('unknown'))
      .finally(() => hold.delete(sessionId))
  }
}
