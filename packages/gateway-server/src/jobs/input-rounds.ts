import { type InputRequest, type InputRequiredResult, inputRequired } from '@modelcontextprotocol/server'
import { assertDecisionAllowed, screenAnswers, screenNote } from '../asks.js'
import { GatewayError } from '../errors.js'
import type { RuntimeSession } from '../runtime/port.js'
import type { JobStatus } from '../schemas.js'
import type { ScreeningHook, ScreeningRecord } from '../screening.js'
import { MAX_ROUND_ASKS, type RequestState } from '../sessions/owned.js'
import {
  type AskReply,
  answerable,
  answersAny,
  permissionForm,
  permissionKey,
  questionForm,
  questionKey,
  readPermissionReply,
  readQuestionReply,
} from './input-forms.js'
import {
  type JobContext,
  type JobKey,
  permissionFields,
  questionItems,
  readJobState,
  waitForJob,
} from './job-status.js'

// Agent questions and permission requests as the client's own dialogs (MCP 2026-07-28 multi
// round-trip requests). A wait that reaches a pending ask answers `input_required` with one form
// per question item or permission request and a sealed `requestState`; the client shows the
// forms and retries the same call with the answers. The retry opens the state (identity-bound,
// short-lived, bound to the tool and its arguments), answers the asks exactly as
// `gateway.interaction.respond` would (screened, policy-checked, pending-checked by the runtime),
// and goes on waiting with the budget that was left. Nothing is kept between rounds: any gateway
// process holding the stack's secret serves any round.

/** Rounds one logical call may take; past them the call answers the plain `input_required` status. */
export const MAX_INPUT_ROUNDS = 8

/** `_meta` keys of an input_required result: the handles of the job its forms are for. */
export const ROUND_META_SESSION = 'sallyport/session'
export const ROUND_META_JOB = 'sallyport/job'

/** One round as the call's audit line records it. */
export interface RoundNote {
  /** 0 for the first call, n for the retry that carries the state of round n. */
  round: number
  /** Forms asked by this call's answer. */
  asked?: number
  /** Asks answered (a choice, a typed answer or a decision, a rejection included). */
  answered?: number
  /** Asks whose dialog was declined or cancelled (dismissed or rejected). */
  declined?: number
}

/** The multi round-trip side of one tool call, as the MCP layer saw it. */
export interface CallRounds {
  /** The client can show forms: a 2026-07-28 request from a client that declares form elicitation. */
  readonly forms: boolean
  /** The echoed `requestState`, unverified, when the call is a retry. */
  readonly state: string | undefined
  /** The answers a retry carries (`inputResponses`): untrusted client input. */
  readonly responses: Record<string, unknown> | undefined
  /** Keys of answers the SDK dropped as not shaped like any response. */
  readonly dropped: readonly string[]
  /** Ties a state to this tool and these arguments (a digest of both). */
  readonly binding: string
  /** Merges into the round recorded for the call's audit line. */
  note(round: Partial<RoundNote>): void
}

export interface RoundContext extends JobContext {
  screening: ScreeningHook
}

/** True when the call carries a round's `requestState` or answers (it must not start anything new). */
export const isRetry = (rounds: Pick<CallRounds, 'state' | 'responses'>): boolean =>
  rounds.state !== undefined || rounds.responses !== undefined

const invalid = (message: string): GatewayError => new GatewayError('invalid_input', message)
const notFound = (): GatewayError => new GatewayError('not_found', 'Not found.')
const notPending = (): GatewayError =>
  new GatewayError(
    'not_pending',
    'A question or permission request of that round is no longer pending (answered already, or the job moved on); gateway.job.get shows the job now.',
  )

/** What a retry goes on with. */
export interface Resumed {
  session: RuntimeSession
  job: JobKey
  waitMs: number
  round: number
  /** Asks the retry answered or dismissed: a retry that moved nothing gets no further round. */
  applied: number
}

/**
 * Opens the state a retry echoes and answers the asks of its round. A state that does not open
 * for this credential, or belongs to another call, is refused like any bad handle. A retry that
 * answers none of its asks is refused, and so is one that answers an ask no longer pending (a
 * replay): checked before anything is sent, so nothing of it is applied.
 */
export async function resumeRound(
  ctx: RoundContext,
  rounds: CallRounds,
  screened: (record: ScreeningRecord) => void,
): Promise<Resumed> {
  if (rounds.state === undefined) throw invalid('inputResponses come with the requestState of their round.')
  const state = await ctx.owned.openRequestState(rounds.state)
  if (state.b !== rounds.binding) throw notFound()
  rounds.note({ round: state.n })
  if (rounds.dropped.length > 0) throw invalid('Answer each form with the bare result of its dialog.')
  const session = await ctx.owned.loadOwned(state.s)
  const applied = await answerRound(ctx, rounds, session.id, state, screened)
  return {
    session,
    job: { messageId: state.m, startedAt: state.t },
    waitMs: state.w,
    round: state.n,
    applied,
  }
}

interface Planned {
  requestId: string
  reply: AskReply
}

/** The asks of the round the retry answers, read and checked: nothing is sent yet. */
async function planRound(
  ctx: RoundContext,
  sessionId: string,
  state: RequestState,
  responses: Record<string, unknown>,
): Promise<Planned[]> {
  const { runtime, principal, redactor } = ctx
  const [questions, permissions] = await Promise.all([
    runtime.questions(sessionId),
    runtime.permissions(sessionId),
  ])
  const plans: Planned[] = []
  let answeredAny = false
  for (const [index, ask] of state.a.entries()) {
    const n = index + 1
    if (ask.k === 'q') {
      const keys = Array.from({ length: ask.c }, (_, j) => questionKey(n, j + 1))
      if (!answersAny(responses, keys)) continue
      answeredAny = true
      const pending = questions.find((q) => q.id === ask.r && q.sessionID === sessionId)
      if (!pending || pending.questions.length !== ask.c) throw notPending()
      const reply = readQuestionReply(questionItems(pending, redactor.text), responses, n)
      if (reply) plans.push({ requestId: ask.r, reply })
    } else {
      if (!answersAny(responses, [permissionKey(n)])) continue
      answeredAny = true
      const pending = permissions.find((p) => p.id === ask.r && p.sessionID === sessionId)
      if (!pending) throw notPending()
      const { allowedDecisions } = permissionFields(principal.policy, pending, redactor.text)
      const reply = readPermissionReply(responses, n, allowedDecisions)
      if (!reply) continue
      // The same checks as gateway.interaction.respond: the policy, and this ask's own decisions.
      assertDecisionAllowed(principal.policy, reply.decision, pending.permission)
      plans.push({ requestId: ask.r, reply })
    }
  }
  if (!answeredAny) throw invalid('A retry answers the forms of its round (inputResponses).')
  return plans
}

async function answerRound(
  ctx: RoundContext,
  rounds: CallRounds,
  sessionId: string,
  state: RequestState,
  screened: (record: ScreeningRecord) => void,
): Promise<number> {
  const { runtime, principal, screening } = ctx
  const plans = await planRound(ctx, sessionId, state, rounds.responses ?? {})
  // Everything is screened before anything reaches the runtime: one blocked answer sends none.
  const record = worstOf(screened)
  for (const { reply } of plans) {
    if (reply.kind === 'answer') await screenAnswers(screening, principal, reply.answers, record)
    else if (reply.kind === 'permission' && reply.message !== undefined)
      await screenNote(screening, principal, reply.message, record)
  }
  // Answers and approvals first: a rejection may end the turn, and the runtime then drops the
  // other asks of the run. An ask gone between the check above and its reply: the others still
  // go out, and the call says the round was not wholly applied, unless the reply was a rejection
  // after another reply of this round went out (which ended the turn: the ask is gone by it).
  const ordered = [
    ...plans.filter((p) => !isRejection(p.reply)),
    ...plans.filter((p) => isRejection(p.reply)),
  ]
  let answered = 0
  let declined = 0
  let absent = false
  for (const { requestId, reply } of ordered) {
    const outcome =
      reply.kind === 'answer'
        ? await runtime.replyQuestion(requestId, reply.answers)
        : reply.kind === 'reject'
          ? await runtime.rejectQuestion(requestId)
          : await runtime.replyPermission(requestId, reply.decision, reply.message)
    if (outcome === 'absent') absent ||= !isRejection(reply) || answered + declined === 0
    else if ('declined' in reply && reply.declined) declined++
    else answered++
  }
  rounds.note({ answered, declined })
  if (absent) throw notPending()
  return answered + declined
}

/** A reply that dismisses or rejects its ask (rather than answering or approving it). */
const isRejection = (reply: AskReply): boolean =>
  reply.kind === 'reject' || (reply.kind === 'permission' && reply.decision === 'reject')

const SEVERITY: Readonly<Record<ScreeningRecord['outcome'], number>> = {
  passed: 0,
  escalated_allowed: 1,
  unavailable: 2,
  blocked: 3,
}

/** Records several screenings of one call as one: the most severe outcome, the time of all. */
function worstOf(screened: (record: ScreeningRecord) => void): (record: ScreeningRecord) => void {
  let worst: ScreeningRecord | undefined
  return (record) => {
    const ms = (worst?.ms ?? 0) + record.ms
    worst =
      !worst || SEVERITY[record.outcome] >= SEVERITY[worst.outcome] ? { ...record, ms } : { ...worst, ms }
    screened(worst)
  }
}

/** How a call waits: the budget, counted from `since`, and the round it is in. */
export interface RoundWait {
  waitMs: number
  round: number
  /** When the budget started to run (default: now); a retry's answering is charged to it. */
  since?: number
  signal?: AbortSignal
  first?: Parameters<typeof waitForJob>[5]
}

/**
 * Waits for the job like `waitForJob`, then, when the wait ends on a pending ask and the client
 * can show forms, answers with the forms of the next round instead of the status. Only waiting
 * calls (and their retries) get forms: a plain status read stays a status read.
 */
export async function waitWithForms(
  ctx: RoundContext,
  rounds: CallRounds,
  session: RuntimeSession,
  job: JobKey,
  wait: RoundWait,
): Promise<JobStatus | InputRequiredResult> {
  const now = ctx.now ?? Date.now
  const since = wait.since ?? now()
  const budget = Math.max(0, wait.waitMs - (now() - since))
  const status = await waitForJob(ctx, session, job, budget, wait.signal, wait.first)
  if (status.status !== 'input_required' || !rounds.forms || wait.signal?.aborted) return status
  if ((wait.round === 0 && wait.waitMs <= 0) || wait.round >= MAX_INPUT_ROUNDS) return status
  const left = Math.max(0, Math.floor(wait.waitMs - (now() - since)))
  return (await formsFor(ctx, rounds, session, job, status, left, wait.round + 1)) ?? status
}

/**
 * A retry: answers the forms, then waits on with what was left of the budget (the answering
 * counted), from a read that starts after the answers were sent (so an ask just answered is
 * never shown again from a read that began before).
 */
export async function continueRound(
  ctx: RoundContext,
  rounds: CallRounds,
  screened: (record: ScreeningRecord) => void,
  signal: AbortSignal,
): Promise<JobStatus | InputRequiredResult> {
  const since = (ctx.now ?? Date.now)()
  const { session, job, waitMs, round, applied } = await resumeRound(ctx, rounds, screened)
  const first = readJobState(ctx, session.id, { fresh: true, from: job.messageId })
  first.catch(() => undefined)
  // Only a retry that moved the job on gets the next round: a state whose forms came back empty
  // would otherwise be a round that could be replayed for ever (each time from its own round
  // number). It gets the plain status, from which gateway.interaction.respond (or a new wait)
  // goes on.
  const next = applied > 0 ? rounds : { ...rounds, forms: false }
  return waitWithForms(ctx, next, session, job, { waitMs, round, since, signal, first })
}

async function formsFor(
  ctx: RoundContext,
  rounds: CallRounds,
  session: RuntimeSession,
  job: JobKey,
  status: JobStatus,
  waitMs: number,
  round: number,
): Promise<InputRequiredResult | undefined> {
  const inputRequests: Record<string, InputRequest> = {}
  const asks: RequestState['a'] = []
  for (const interaction of status.interactions ?? []) {
    const forms = interaction.kind === 'question' ? interaction.questions.length : 1
    // Whole asks only, none a form cannot answer: the rest waits for the next round or the
    // polling flow (gateway.interaction.respond).
    if (Object.keys(inputRequests).length + forms > MAX_ROUND_ASKS) continue
    if (interaction.kind === 'question' && !interaction.questions.every(answerable)) continue
    const { requestId } = await ctx.owned.interactionOf(interaction.interaction)
    const n = asks.length + 1
    if (interaction.kind === 'question') {
      for (const [j, item] of interaction.questions.entries())
        inputRequests[questionKey(n, j + 1)] = questionForm(item)
      asks.push({ k: 'q', r: requestId, c: interaction.questions.length })
    } else {
      inputRequests[permissionKey(n)] = permissionForm(interaction)
      asks.push({ k: 'p', r: requestId })
    }
  }
  if (asks.length === 0) return undefined
  const requestState = await ctx.owned.sealRequestState({
    b: rounds.binding,
    s: session.id,
    m: job.messageId,
    t: job.startedAt,
    w: waitMs,
    n: round,
    a: asks,
  })
  rounds.note({ asked: Object.keys(inputRequests).length })
  // The job's handles ride along, so a client whose dialogs fail can still follow the job.
  return {
    ...inputRequired({ inputRequests, requestState }),
    _meta: { [ROUND_META_SESSION]: status.session, [ROUND_META_JOB]: status.job },
  }
}
