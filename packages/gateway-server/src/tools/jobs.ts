import { agentProfile } from '@sallyport/policy'
import { isTransientUpstream } from '../error-mapping.js'
import { GatewayError } from '../errors.js'
import { cancelRun, type StopLogger, stopWhenOverdrawn } from '../jobs/cancel-run.js'
import { newestRun } from '../jobs/derive-job-state.js'
import { continueRound, isRetry, type RoundContext, waitWithForms } from '../jobs/input-rounds.js'
import { type JobContext, readJobState, settleJob } from '../jobs/job-status.js'
import type { RunEventMeter } from '../jobs/run-events.js'
import { watchRunEnd } from '../jobs/run-watch.js'
import { READ_ONLY_HINTS, type ToolDefinition } from '../mcp/define-tool.js'
import type { RuntimeSession } from '../runtime/port.js'
import { AgentRunInput, JobCancel, JobCancelInput, JobGetInput, JobStatus } from '../schemas.js'
import { type ScreeningHook, screenOrThrow } from '../screening.js'

export interface JobToolContext extends RoundContext {
  screening: ScreeningHook
  /** Upstream session ids with an `agent.run` between its busy check and its prompt, in this process. */
  starting: Set<string>
  /** Counts each run's runtime events against its credential (`limits.runEventsPerSecond`). */
  runEvents?: RunEventMeter
  /** Told (no id, no key) when the gateway stops a run by itself. */
  logger?: StopLogger
}

const busy = (): GatewayError =>
  new GatewayError(
    'busy',
    'That session is still running a job; wait for it (gateway.job.get) or cancel it first.',
  )

/** `gateway.agent.run`: create or resume an owned session, screen, start the policy's agent, wait up to waitMs. */
export function agentRunTool(ctx: JobToolContext): ToolDefinition<typeof AgentRunInput, typeof JobStatus> {
  const { runtime, owned, principal } = ctx
  return {
    title: 'Run the agent',
    description:
      "Send a message to the coding agent in a new session or a session you own (session handle). The agent runs asynchronously; waitMs (0-30000) waits for it to finish or to need input. Returns the session and job handles and the job status (running, input_required, completed, failed or cancelled). Clients that show MCP 2026-07-28 form dialogs get the agent's questions and permission requests as forms during the wait instead of input_required.",
    input: AgentRunInput,
    output: JobStatus,
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    rounds: true,
    // A retry of a round starts nothing: it answers the forms and waits.
    slot: (_input, retry) => (retry ? 'wait' : 'run'),
    run: async ({ message, session: sessionHandle, title, waitMs }, signal, call) => {
      if (isRetry(call.rounds)) return continueRound(ctx, call.rounds, call.screened, signal)
      const agent = agentProfile(principal.policy)
      let session: RuntimeSession | undefined
      if (sessionHandle !== undefined) {
        session = await owned.openSession(sessionHandle)
        // Reserve synchronously, before any await, so two concurrent runs cannot both pass.
        if (ctx.starting.has(session.id)) throw busy()
        ctx.starting.add(session.id)
      }
      const reserved = session?.id
      const messageId = runtime.newMessageId()
      const startedAt = (ctx.now ?? Date.now)()
      try {
        // A busy session would queue the prompt, and the runtime drops queued prompts when the
        // turn ahead fails: refuse instead of queueing silently.
        if (session && (await runtime.statusOf(session.id)) !== 'idle') throw busy()
        // A new session's title is stored in the runtime too (and shown by its own UI): screened
        // with the message, so the moderator sees both.
        const titled = !session && title !== undefined
        await screenOrThrow(
          ctx.screening,
          titled
            ? { kind: 'message', text: `${title}\n\n${message}`, parts: [title, message], principal }
            : { kind: 'message', text: message, principal },
          call.screened,
        )
        if (!session) session = await createOwnedSession(ctx, agent, title)
        await promptOrConfirm(runtime, session.id, { messageId, agent, text: message })
      } finally {
        // Once prompted, the runtime itself reports the session busy.
        if (reserved) ctx.starting.delete(reserved)
      }
      // The credential's run slot stays taken until the run is over, not just this call, and
      // the run's runtime events count against the credential meanwhile.
      const release = call.keep()
      const job = { messageId, startedAt }
      const stopCounting = ctx.runEvents?.track(
        session.id,
        stopWhenOverdrawn(ctx, session.id, job, ctx.starting, release.events),
      )
      void watchRunEnd(runtime, session.id, messageId, ctx.now).finally(() => {
        stopCounting?.()
        release()
      })
      return waitWithForms(ctx, call.rounds, session, job, { waitMs: waitMs ?? 0, round: 0, signal })
    },
  }
}

/**
 * Sends the prompt. When the runtime gave no usable answer (timeout, lost connection: a busy
 * machine), the prompt may still have been taken: the session's messages tell, and a prompt that
 * was taken is a started job, not a failure (its client would otherwise lose a running job).
 */
async function promptOrConfirm(
  runtime: JobContext['runtime'],
  sessionId: string,
  input: { messageId: string; agent: string; text: string },
): Promise<void> {
  try {
    await runtime.prompt(sessionId, input)
  } catch (error) {
    if (!isTransientUpstream(error)) throw error
    const messages = await runtime.messages(sessionId, { from: input.messageId }).catch(() => undefined)
    if (!messages?.some((m) => m.info.id === input.messageId && m.info.role === 'user')) throw error
  }
}

async function createOwnedSession(
  ctx: JobContext,
  agent: string,
  title: string | undefined,
): Promise<RuntimeSession> {
  const { runtime, owned } = ctx
  const session = await runtime.createSession({ agent, metadata: {}, ...(title !== undefined && { title }) })
  try {
    // The HMAC covers the upstream id, which exists only after creation: sign, then write.
    const metadata = await owned.ownershipMetadata(session.id)
    await runtime.setSessionMetadata(session.id, metadata)
    return { ...session, metadata }
  } catch (error) {
    await runtime.deleteSession(session.id).catch(() => undefined)
    throw error
  }
}

/** `gateway.job.get`: the job's status derived from the runtime now, optionally waiting. */
export function jobGetTool(ctx: RoundContext): ToolDefinition<typeof JobGetInput, typeof JobStatus> {
  return {
    title: 'Get a job',
    description:
      'Get the status of a job (from gateway.agent.run), optionally waiting up to waitMs (0-30000) for it to finish or need input (with form dialogs, as in gateway.agent.run).',
    input: JobGetInput,
    output: JobStatus,
    hints: READ_ONLY_HINTS,
    rounds: true,
    slot: ({ waitMs }, retry) => (retry || (waitMs ?? 0) > 0 ? 'wait' : undefined),
    run: async ({ job, waitMs }, signal, call) => {
      if (isRetry(call.rounds)) return continueRound(ctx, call.rounds, call.screened, signal)
      const ref = await ctx.owned.jobOf(job)
      // Start the state reads together with the ownership check; used only once it passes.
      const prefetched = readJobState(ctx, ref.sessionId, { outcomeOf: ref.messageId, from: ref.messageId })
      prefetched.catch(() => undefined)
      const session = await ctx.owned.loadOwned(ref.sessionId)
      return waitWithForms(ctx, call.rounds, session, ref, {
        waitMs: waitMs ?? 0,
        round: 0,
        signal,
        first: prefetched,
      })
    },
  }
}

/** `gateway.job.cancel`: aborts the run only while this job is the session's active run. */
export function jobCancelTool(ctx: JobToolContext): ToolDefinition<typeof JobCancelInput, typeof JobCancel> {
  const { owned } = ctx
  return {
    title: 'Cancel a job',
    description:
      'Abort a running job. A job that already ended, or an older job of a session now running a newer one, cannot cancel anything.',
    input: JobCancelInput,
    output: JobCancel,
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async ({ job }) => {
      const { session, messageId, startedAt } = await owned.openJob(job)
      // Hold the session so no agent.run of this process starts a newer run between the check
      // below and the abort: an older job must never abort a later run.
      if (ctx.starting.has(session.id)) throw busy()
      ctx.starting.add(session.id)
      try {
        const key = { messageId, startedAt }
        // Confirmed like job.get: a live run misread as over would be refused as not pending.
        const { derived: state, snapshot } = await settleJob(ctx, session.id, key)
        if (state.state === 'missing') throw new GatewayError('not_found', 'Not found.')
        // Idempotent: a job that is already cancelled is answered so again.
        if (state.state === 'cancelled')
          return { status: 'cancelled' as const, session: await owned.sealSession(session.id), job }
        if (state.state !== 'running' && state.state !== 'input_required') {
          throw new GatewayError('not_pending', 'That job is not running, so there is nothing to cancel.')
        }
        // Aborts the turn (and its subagents) and rejects the asks it left pending, again while
        // the run shows up live, until the runtime records the end (an abort that comes before
        // the runtime has begun the run is lost).
        const begun =
          (snapshot.status !== 'idle' && newestRun(snapshot.messages) === messageId) ||
          snapshot.messages.some((m) => m.info.role === 'assistant' && m.info.parentID === messageId)
        const outcome = await cancelRun(ctx, session.id, key, ctx.starting, { begun })
        if (outcome === 'finished') {
          throw new GatewayError(
            'not_pending',
            'That job finished before the cancel took effect; gateway.job.get shows how it ended.',
          )
        }
        return { status: 'cancelled' as const, session: await owned.sealSession(session.id), job }
      } finally {
        ctx.starting.delete(session.id)
      }
    },
  }
}
