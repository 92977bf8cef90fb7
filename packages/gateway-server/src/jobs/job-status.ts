import { allowedDecisions } from '@agentgate/policy'
import { GatewayError } from '../errors.js'
import type { Principal } from '../principal.js'
import type { Redactor } from '../redact.js'
import type { RuntimePort, RuntimeSession, RuntimeStatus } from '../runtime/port.js'
import type { Interaction, JobStatus } from '../schemas.js'
import type { OwnedSessions } from '../sessions/owned.js'
import { changedFile, todoViews } from '../sessions/views.js'
import { type DerivedJobState, deriveJobState, INTERRUPTED, type TurnMessage } from './derive-job-state.js'

export interface JobContext {
  principal: Principal
  runtime: RuntimePort
  owned: OwnedSessions
  /** Rewrites every string relayed from the runtime (no host path, no upstream id). */
  redactor: Redactor
  now?: () => number
}

/** How long a run counts as just started when its user message is not stored yet. */
export const START_GRACE_MS = 60_000
/**
 * How long after the prompt an idle session with no answer still counts as starting. Longer
 * than the runtime ever takes to mark a prompted session busy (milliseconds, seconds under heavy
 * load); a run aborted before any answer reads as `running` for at most this long.
 */
export const PROMPT_GRACE_MS = 10_000

/** Which run a job is: the user message the gateway chose, and when it started. */
export interface JobKey {
  messageId: string
  startedAt: number
}

/**
 * Derives the job's state from the runtime's records, with the start-time graces applied from
 * the job handle (the one place that reads the clock for a job).
 */
export function deriveJob(
  ctx: JobContext,
  job: JobKey,
  turn: { messages: readonly TurnMessage[]; status: RuntimeStatus; pendingAsks: number },
): DerivedJobState {
  const age = (ctx.now ?? Date.now)() - job.startedAt
  return deriveJobState({
    messages: turn.messages,
    messageId: job.messageId,
    session: turn.status,
    pendingAsks: turn.pendingAsks,
    justStarted: age < START_GRACE_MS,
    justPrompted: age < PROMPT_GRACE_MS,
    redact: ctx.redactor.text,
  })
}

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
  prefetched?: Promise<[TurnMessage[], RuntimeStatus]>,
): Promise<JobStatus> {
  const { runtime, owned, redactor } = ctx
  const text = redactor.text
  const { messageId, startedAt } = job
  const read = await (prefetched ?? readTurnState(runtime, session.id))
  const [messages, status] = await confirmInterrupted(ctx, session.id, job, read)
  const [permissions, questions] =
    status === 'idle'
      ? [[], []]
      : await Promise.all([runtime.permissions(session.id), runtime.questions(session.id)])
  const derived = deriveJob(ctx, job, {
    messages,
    status,
    pendingAsks: permissions.length + questions.length,
  })
  if (derived.state === 'missing') throw new GatewayError('not_found', 'Not found.')
  const [sessionHandle, jobHandle] = await Promise.all([
    owned.sealSession(session.id),
    owned.sealJob(session.id, messageId, startedAt),
  ])
  const base = { session: sessionHandle, job: jobHandle }
  switch (derived.state) {
    case 'running':
      return { status: 'running', ...base }
    case 'input_required': {
      const interactions: Interaction[] = [
        ...(await Promise.all(
          questions.map(async (q) => ({
            kind: 'question' as const,
            interaction: await owned.sealInteraction(session.id, q.id, 'question'),
            questions: q.questions.map((item) => ({
              header: text(item.header),
              question: text(item.question),
              options: item.options.map((o) => ({ label: text(o.label), description: text(o.description) })),
              ...(item.multiple !== undefined && { multiple: item.multiple }),
              ...(item.custom !== undefined && { custom: item.custom }),
            })),
          })),
        )),
        ...(await Promise.all(
          permissions.map(async (p) => ({
            kind: 'permission' as const,
            interaction: await owned.sealInteraction(session.id, p.id, 'permission'),
            permission: text(p.permission),
            patterns: p.patterns.map(text),
            // Decided on the runtime's own permission name (a webfetch ask is never "always").
            allowedDecisions: [...allowedDecisions(ctx.principal.policy, p.permission)],
          })),
        )),
      ]
      return { status: 'input_required', ...base, interactions }
    }
    case 'completed': {
      const [diff, todos] = await Promise.all([
        runtime.messageDiff(session.id, messageId),
        runtime.todos(session.id),
      ])
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
    case 'cancelled':
      return { status: 'cancelled', ...base, text: derived.text, usage: derived.usage }
  }
}

const isInterrupted = (state: DerivedJobState): boolean =>
  state.state === 'failed' && state.error.name === INTERRUPTED

/**
 * "Idle, with an unfinished answer" is what a turn killed with its process leaves, so it derives
 * as a failed run. But the two reads it comes from run concurrently and may come from different
 * moments: messages from just before a turn completed with the status from just after (idle),
 * or a turn that just started. Clients stop polling on `failed`, so that state is confirmed
 * before it is reported: the status is read again AFTER the messages (still running → busy),
 * then the messages again AFTER an idle status (a turn that finished meanwhile is complete in
 * them). The runtime marks a session busy before it creates the answer and completes the answer
 * before it goes idle, so an unfinished answer read after an idle status is a dead run. Two
 * rounds at most; the common paths never get here.
 */
export async function confirmInterrupted(
  ctx: JobContext,
  sessionId: string,
  job: JobKey,
  read: [TurnMessage[], RuntimeStatus],
): Promise<[TurnMessage[], RuntimeStatus]> {
  let [messages, status] = read
  const derive = (): DerivedJobState => deriveJob(ctx, job, { messages, status, pendingAsks: 0 })
  for (let round = 0; round < 2 && isInterrupted(derive()); round++) {
    status = await ctx.runtime.statusOf(sessionId)
    if (status !== 'idle') break
    messages = await ctx.runtime.messages(sessionId)
  }
  return [messages, status]
}

/** The two reads a job's state is derived from. */
export function readTurnState(
  runtime: RuntimePort,
  sessionId: string,
): Promise<[TurnMessage[], RuntimeStatus]> {
  return Promise.all([runtime.messages(sessionId), runtime.statusOf(sessionId)])
}

/**
 * Waits up to `waitMs` for the job to leave `running` (event-driven; polling only while the
 * runtime's event stream is down), then returns its status.
 */
export async function waitForJob(
  ctx: JobContext,
  session: RuntimeSession,
  job: JobKey,
  waitMs: number,
  signal?: AbortSignal,
  prefetched?: Promise<[TurnMessage[], RuntimeStatus]>,
): Promise<JobStatus> {
  if (waitMs <= 0) return jobStatus(ctx, session, job, prefetched)
  const settled = await ctx.runtime.waitUntil(
    session.id,
    async () => {
      // The first check uses the reads started before the ownership check, later ones read anew.
      const reads = prefetched
      prefetched = undefined
      const status = await jobStatus(ctx, session, job, reads)
      return status.status === 'running' ? undefined : status
    },
    { timeoutMs: waitMs, ...(signal && { signal }) },
  )
  return settled ?? jobStatus(ctx, session, job)
}

/** One-line text rendering of a job status for text-only clients. */
export function renderJobStatus(status: JobStatus): string {
  const lines = [`status: ${status.status}`, `session: ${status.session}`, `job: ${status.job}`]
  if (status.text) lines.push('', status.text)
  if (status.error) lines.push(`error: ${status.error.name}: ${status.error.message}`)
  for (const i of status.interactions ?? []) {
    if (i.kind === 'permission') {
      lines.push(
        `permission requested: ${i.permission} ${i.patterns.join(' ')} (interaction: ${i.interaction}; decisions: ${i.allowedDecisions.join('/')})`,
      )
    } else {
      for (const q of i.questions)
        lines.push(
          `question: ${q.question} [${q.options.map((o) => o.label).join(' | ')}] (interaction: ${i.interaction})`,
        )
    }
  }
  if (status.changedFiles?.length)
    lines.push(`changed files: ${status.changedFiles.map((f) => f.file).join(', ')}`)
  return lines.join('\n')
}
