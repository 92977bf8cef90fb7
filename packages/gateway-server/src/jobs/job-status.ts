import { allowedDecisions } from '@sallyport/policy'
import { sanitizeProviderMessage } from '@sallyport/upstream-client'
import { isTransientUpstream } from '../error-mapping.js'
import { GatewayError } from '../errors.js'
import type { Principal } from '../principal.js'
import type { Redactor } from '../redact.js'
import type {
  RuntimePermission,
  RuntimePort,
  RuntimeQuestion,
  RuntimeRetry,
  RuntimeSession,
  RuntimeWake,
} from '../runtime/port.js'
import type { Interaction, JobStatus, RetryState } from '../schemas.js'
import type { OwnedSessions } from '../sessions/owned.js'
import { changedFile, todoViews } from '../sessions/views.js'
import { DEAD_AFTER_MS, type DerivedJobState, deriveJobState, newestRun } from './derive-job-state.js'
import { type ReadNeed, readTurn, type TurnSnapshot } from './turn-reads.js'

export { DEAD_AFTER_MS, START_GRACE_MS } from './derive-job-state.js'

type QuestionInteraction = Extract<Interaction, { kind: 'question' }>
type PermissionInteraction = Extract<Interaction, { kind: 'permission' }>
/** One item of a pending question, as clients see it. */
export type QuestionItem = QuestionInteraction['questions'][number]

export interface JobContext {
  principal: Principal
  runtime: RuntimePort
  owned: OwnedSessions
  /** Rewrites every string relayed from the runtime (no host path, no upstream id). */
  redactor: Redactor
  now?: () => number
}

/** Which run a job is: the user message the gateway chose, and when it started. */
export interface JobKey {
  messageId: string
  startedAt: number
}

/** A job's state and the read it was derived from. */
interface Settled {
  snapshot: TurnSnapshot
  derived: DerivedJobState
}

/**
 * Derives the job's state from one read, with the clock and this gateway's own cancels (the one
 * place that reads the clock for a job).
 */
export function deriveJob(
  ctx: JobContext,
  sessionId: string,
  job: JobKey,
  snapshot: TurnSnapshot,
  options: { ownCancels?: boolean } = {},
): DerivedJobState {
  return deriveJobState({
    messages: snapshot.messages,
    messageId: job.messageId,
    session: snapshot.status,
    pendingAsks: snapshot.permissions.length + snapshot.questions.length,
    now: (ctx.now ?? Date.now)(),
    startedAt: job.startedAt,
    cancelledByGateway: options.ownCancels !== false && cancelledHere(ctx.runtime, sessionId, job),
    redact: ctx.redactor.text,
  })
}

/** Confirming reads of an inferred terminal state, at most. */
const CONFIRM_ROUNDS = 2

/**
 * The job's state, confirmed: a terminal state inferred from an idle session (not from a record
 * of the end) is reported only when a second read, started after the first one finished, derives
 * the same; two disagreeing rounds leave it `running` (the next poll or event looks again).
 * Records of an end (errors, aborts, final answers) and `running` need no second read.
 */
export async function settleJob(
  ctx: JobContext,
  sessionId: string,
  job: JobKey,
  first?: Promise<TurnSnapshot>,
): Promise<Settled> {
  let snapshot = await (first ??
    readTurn(ctx.runtime, sessionId, { outcomeOf: job.messageId, from: job.messageId }))
  let derived = deriveJob(ctx, sessionId, job, snapshot)
  for (let round = 0; round < CONFIRM_ROUNDS && isInferred(derived); round++) {
    const again = await readTurn(ctx.runtime, sessionId, { after: snapshot, from: job.messageId })
    const next = deriveJob(ctx, sessionId, job, again)
    if (!isInferred(next) || next.state === derived.state) return { snapshot: again, derived: next }
    snapshot = again
    derived = next
  }
  return isInferred(derived) ? { snapshot, derived: { state: 'running' } } : { snapshot, derived }
}

const isInferred = (state: DerivedJobState): boolean => 'inferred' in state && state.inferred === true

/**
 * The full `JobStatus` of one job, derived from the runtime now. `running` is returned with no
 * other fields; the other states carry what a client needs to act (interactions as handles) or
 * to report (final text, changed files, todos, usage, error). Every string taken from the
 * runtime is rewritten by the redactor.
 */
export async function jobStatus(
  ctx: JobContext,
  session: RuntimeSession,
  job: JobKey,
  first?: Promise<TurnSnapshot>,
): Promise<JobStatus> {
  const { snapshot, derived } = await settleJob(ctx, session.id, job, first)
  return present(ctx, session, job, snapshot, derived)
}

async function present(
  ctx: JobContext,
  session: RuntimeSession,
  job: JobKey,
  snapshot: TurnSnapshot,
  derived: DerivedJobState,
): Promise<JobStatus> {
  const { owned, redactor } = ctx
  const text = redactor.text
  const { messageId, startedAt } = job
  if (derived.state === 'missing') throw new GatewayError('not_found', 'Not found.')
  const [sessionHandle, jobHandle] = await Promise.all([
    owned.sealSession(session.id),
    owned.sealJob(session.id, messageId, startedAt),
  ])
  const base = { session: sessionHandle, job: jobHandle }
  switch (derived.state) {
    case 'running': {
      const retry = retryState(redactor, snapshot.retry)
      return { status: 'running', ...base, ...(retry && { retry }) }
    }
    case 'input_required': {
      const interactions: Interaction[] = [
        ...(await Promise.all(
          snapshot.questions.map(async (q) => ({
            kind: 'question' as const,
            interaction: await owned.sealInteraction(session.id, q.id, 'question'),
            questions: questionItems(q, text),
          })),
        )),
        ...(await Promise.all(
          snapshot.permissions.map(async (p) => ({
            kind: 'permission' as const,
            interaction: await owned.sealInteraction(session.id, p.id, 'permission'),
            ...permissionFields(ctx.principal.policy, p, text),
          })),
        )),
      ]
      return { status: 'input_required', ...base, interactions }
    }
    case 'completed': {
      const [diff, todos] = await snapshot.outcome(messageId)
      return {
        status: 'completed',
        ...base,
        text: derived.text,
        changedFiles: diff.map((d) => changedFile(redactor, d)),
        todos: todoViews(redactor, todos),
        usage: derived.usage,
      }
    }
    case 'failed':
      return { status: 'failed', ...base, text: derived.text, error: derived.error, usage: derived.usage }
    case 'cancelled': {
      const error = stoppedHere(ctx.runtime, session.id, job)
      return {
        status: 'cancelled',
        ...base,
        text: derived.text,
        usage: derived.usage,
        ...(error && { error }),
      }
    }
  }
}

/**
 * The runtime's retry as clients see it: the provider's message without keys, tokens, host paths
 * or upstream ids (the redactor, then `sanitizeProviderMessage`); a time the runtime did not give
 * as a valid instant is left out rather than invented.
 */
export function retryState(redactor: Redactor, retry: RuntimeRetry | undefined): RetryState | undefined {
  if (!retry) return undefined
  const message = sanitizeProviderMessage(redactor.text(retry.message))
  const next = new Date(retry.next)
  return {
    attempt: Math.max(0, Math.trunc(retry.attempt)),
    ...(Number.isFinite(next.getTime()) && { nextRetryAt: next.toISOString() }),
    ...(message !== undefined && { message }),
  }
}

/** A pending question's items as clients see them (every string rewritten by `text`). */
export function questionItems(q: RuntimeQuestion, text: (value: string) => string): QuestionItem[] {
  return q.questions.map((item) => ({
    header: text(item.header),
    question: text(item.question),
    options: item.options.map((o) => ({ label: text(o.label), description: text(o.description) })),
    ...(item.multiple !== undefined && { multiple: item.multiple }),
    ...(item.custom !== undefined && { custom: item.custom }),
  }))
}

/**
 * A pending permission request as clients see it: its name and patterns, the decisions this
 * policy may send for it (decided on the runtime's own permission name: a webfetch ask is never
 * "always"), and with `always` among them the runtime's own patterns an `always` answer approves
 * (`alwaysPatterns`): wider than the ask's `patterns` (for `echo x`, `echo *`), so a client can
 * show what it would approve for the rest of the runtime's life.
 */
export function permissionFields(
  policy: Principal['policy'],
  p: RuntimePermission,
  text: (value: string) => string,
): Omit<PermissionInteraction, 'kind' | 'interaction'> {
  const decisions = [...allowedDecisions(policy, p.permission)]
  return {
    permission: text(p.permission),
    patterns: p.patterns.map(text),
    allowedDecisions: decisions,
    ...(decisions.includes('always') && { alwaysPatterns: (p.always ?? []).map(text) }),
  }
}

/**
 * Starts the read a job's state is derived from (e.g. in parallel with the ownership check);
 * shared with every other reader of the session that needs no fresher data.
 */
export function readJobState(ctx: JobContext, sessionId: string, need?: ReadNeed): Promise<TurnSnapshot> {
  return readTurn(ctx.runtime, sessionId, need)
}

/** Pause before a wait tries again after the runtime failed to answer a read. */
export const WAIT_RETRY_MS = 500

const RETRY = Symbol('retry')

/**
 * Waits up to `waitMs` for the job to leave `running` (event-driven while the runtime's event
 * stream is live; while it is not — dropped, refused, or silent past one heartbeat: stalled — one
 * poll per session about every second, and a read when it is live again; see the upstream
 * client's `session-events.ts`), then returns its status. Waiters of one session share one read
 * per event or poll (`turn-reads.ts`).
 *
 * A read the runtime did not answer (timeout, lost connection, a retryable HTTP status: a busy
 * machine) does not end the wait: it is tried again every {@link WAIT_RETRY_MS} until the
 * deadline. At the deadline the wait answers `running` if any read showed it running, and the
 * runtime's failure only if no read succeeded at all.
 */
export async function waitForJob(
  ctx: JobContext,
  session: RuntimeSession,
  job: JobKey,
  waitMs: number,
  signal?: AbortSignal,
  first?: Promise<TurnSnapshot>,
): Promise<JobStatus> {
  if (waitMs <= 0) return jobStatus(ctx, session, job, first)
  const now = ctx.now ?? Date.now
  const deadline = now() + waitMs
  let lastRunning: JobStatus | undefined
  let lastFailure: unknown
  for (;;) {
    const settled = await ctx.runtime.waitUntil(
      session.id,
      async (wake?: RuntimeWake): Promise<JobStatus | typeof RETRY | undefined> => {
        // The first check uses the read started before the ownership check, unless an event came
        // between that read and the start of the wait (its change could be missing from the read,
        // and no later event would wake this wait for it).
        const early = first && (await first.catch(() => undefined))
        first = undefined
        const reads =
          early && (!wake || early.sequence >= wake.sequence)
            ? Promise.resolve(early)
            : readTurn(ctx.runtime, session.id, {
                ...(wake && { sequence: wake.sequence }),
                outcomeOf: job.messageId,
                from: job.messageId,
              })
        let status: JobStatus
        try {
          status = await jobStatus(ctx, session, job, reads)
        } catch (error) {
          if (!isTransientUpstream(error)) throw error
          lastFailure = error
          return RETRY
        }
        if (status.status !== 'running') return status
        lastRunning = status
        return undefined
      },
      // Read as it is now: a burst of events (the end of a run) is checked once, whole.
      { timeoutMs: Math.max(0, deadline - now()), afterBurst: true, ...(signal && { signal }) },
    )
    if (settled !== RETRY) {
      // At the deadline the last check stands: any change since would have woken a new one (its
      // event; while the stream is not live, a poll about every second; during a stall not
      // detected yet, the status probe when the run ends).
      if (settled) return settled
      if (lastRunning) return lastRunning
      if (lastFailure !== undefined) throw lastFailure
      return jobStatus(ctx, session, job)
    }
    const left = deadline - now()
    if (left <= 0) {
      if (lastRunning) return lastRunning
      throw lastFailure
    }
    await pause(Math.min(WAIT_RETRY_MS, left), signal)
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

// This gateway's own cancels. An abort that reaches the runtime before the run has begun is
// lost (measured: the run then goes on to its end), and one that lands before the first answer
// leaves no record but an idle session with no answer, which a run not begun yet also shows.
// So the gateway remembers what it cancelled (in this process, for as long as a dead run takes
// to read as dead anyway) and, during that time, aborts again whenever the run shows up live.

interface Cancels {
  at: Map<string, number>
  /** Why this gateway stopped a run by itself (no client cancelled it), for its `cancelled` status. */
  why: Map<string, JobError>
}

/** The error a `cancelled` job carries when the gateway stopped its run by itself. */
export interface JobError {
  name: string
  message: string
}
const cancels = new WeakMap<RuntimePort, Cancels>()
const MAX_CANCELS = 10_000
const cancelKey = (sessionId: string, messageId: string): string => `${sessionId}\u0000${messageId}`

function cancelsOf(runtime: RuntimePort): Cancels {
  let entry = cancels.get(runtime)
  if (!entry) {
    entry = { at: new Map(), why: new Map() }
    cancels.set(runtime, entry)
  }
  return entry
}

function cancelledHere(runtime: RuntimePort, sessionId: string, job: JobKey): boolean {
  return cancels.get(runtime)?.at.has(cancelKey(sessionId, job.messageId)) === true
}

function stoppedHere(runtime: RuntimePort, sessionId: string, job: JobKey): JobError | undefined {
  return cancels.get(runtime)?.why.get(cancelKey(sessionId, job.messageId))
}

/**
 * Records why this gateway is stopping the job's run by itself (not a client's cancel): its
 * `cancelled` status then carries `error` (in this process; the newest {@link MAX_CANCELS}).
 */
export function rememberStop(runtime: RuntimePort, sessionId: string, job: JobKey, error: JobError): void {
  keepNewest(cancelsOf(runtime).why, cancelKey(sessionId, job.messageId), error)
}

/** Sets `key`, first dropping the oldest entries so that at most {@link MAX_CANCELS} stay. */
function keepNewest<V>(map: Map<string, V>, key: string, value: V): void {
  for (const old of map.keys()) {
    if (map.size < MAX_CANCELS) break
    map.delete(old)
  }
  map.set(key, value)
}

/**
 * Records that this gateway aborted the job's run and keeps it aborted: for up to
 * {@link DEAD_AFTER_MS}, whenever the run shows up live again (its abort came before the run
 * began), it is aborted again — only while it is still the session's newest run, and never
 * while `hold` says another run of the session is being started.
 */
export function keepCancelled(
  ctx: JobContext,
  sessionId: string,
  job: JobKey,
  hold: {
    has(sessionId: string): boolean
    add(sessionId: string): unknown
    delete(sessionId: string): unknown
  },
): void {
  // Kept (the newest MAX_CANCELS) rather than timed out: a cancelled job must not turn into
  // another terminal state later. Only consulted when the runtime recorded no end.
  keepNewest(cancelsOf(ctx.runtime).at, cancelKey(sessionId, job.messageId), (ctx.now ?? Date.now)())
  void ctx.runtime
    .waitUntil(
      sessionId,
      async (wake?: RuntimeWake) => {
        const snapshot = await readTurn(ctx.runtime, sessionId, {
          ...(wake && { sequence: wake.sequence }),
          from: job.messageId,
        })
        // From the runtime's records alone: what this gateway remembers is no record of the end.
        const state = deriveJob(ctx, sessionId, job, snapshot, { ownCancels: false })
        if (state.state !== 'running' && state.state !== 'input_required') return true
        if (snapshot.status === 'idle' || newestRun(snapshot.messages) !== job.messageId) return undefined
        if (hold.has(sessionId)) return undefined
        hold.add(sessionId)
        try {
          await ctx.runtime.abortSession(sessionId)
        } finally {
          hold.delete(sessionId)
        }
        return undefined
      },
      { timeoutMs: DEAD_AFTER_MS },
    )
    .catch(() => undefined)
}
