import { redactSecrets } from '@sallyport/upstream-client'
import type { RuntimeMessage } from '../runtime/port.js'

// Job state is never stored: it is derived from the runtime's own records every time, so any
// gateway replica answers the same and an old completed job stays deterministic.
//
// A terminal state is final: clients stop polling on it. So a run is reported over only when
// the runtime RECORDED its end (an error, an abort, a completed final answer), or when it is
// provably dead. What the runtime shows of a run, measured on opencode 1.18.33 (2 vCPU):
//
// - the user message is stored, then — seconds later on a loaded machine (3-6 s measured with
//   18 runs and the CPU busy; over 10 s in a 100-client soak) — the session reads busy and the
//   first assistant message appears. Until then the session reads `idle` with no answer;
// - each step is an assistant message (parentID = the user message) completed with a `finish`;
//   `tool-calls` / `unknown` steps are followed by another step, the session staying busy
//   (or `retry` during provider back-off, the step's message unfinished and empty);
// - at the end the last message is completed (finish, error, or `MessageAbortedError`) and only
//   THEN the session goes idle;
// - an abort during retry back-off completes the message with no finish, no error, no parts; an
//   abort before the first answer leaves no answer at all; an abort sent before the runtime
//   began the run is lost (the run goes on);
// - a process killed mid-turn leaves the last answer unfinished (or no answer) and the session
//   idle for good.
//
// The derivation assumes the status was read BEFORE the messages (`turn-reads.ts`), so an idle
// status is never newer than the messages it is paired with.

/** The fields of a runtime message the derivation reads: the port's own message type. */
export type TurnMessage = RuntimeMessage

/** Error name of a run the runtime will never finish (its process died mid-turn). */
export const INTERRUPTED = 'Interrupted'

/**
 * How long a run may show no sign of life in an idle session before it counts as dead: from the
 * newest of the job's start, its user message and every time stamp of its answer. Live runs
 * show such a picture only while the runtime has not begun them yet (seconds under load), so a
 * dead run (the runtime restarted) ends at most this long after its last activity, plus one
 * poll. Deliberately long: staying `running` a little longer is harmless, a false terminal state
 * is not.
 */
export const DEAD_AFTER_MS = 60_000

/** How long a run whose user message is not stored yet still counts as starting. */
export const START_GRACE_MS = 60_000

/** Step finishes after which the runtime runs another step of the same turn. */
const CONTINUES = new Set(['tool-calls', 'unknown'])

export type SessionRunState = 'idle' | 'busy' | 'retry'

/**
 * `inferred` marks a state read from an idle session rather than from a record of the end (a
 * dead run, a turn stopped by a rejected tool call, a gone message): the caller confirms it with
 * a second, later read before reporting it.
 */
export type DerivedJobState =
  | { state: 'running' }
  | { state: 'input_required' }
  | { state: 'completed'; text: string; usage: Usage; inferred?: true }
  | {
      state: 'failed'
      error: { name: string; message: string }
      text: string
      usage: Usage
      inferred?: true
    }
  | { state: 'cancelled'; text: string; usage: Usage; inferred?: true }
  | { state: 'missing'; inferred: true }

export interface Usage {
  cost: number
  input: number
  output: number
  reasoning: number
  cacheRead: number
  cacheWrite: number
}

export interface DeriveInput {
  /** The session's messages, oldest first, read AFTER `session`. */
  messages: readonly TurnMessage[]
  /** The job's user message id. */
  messageId: string
  /** The session's run status, read BEFORE `messages`. */
  session: SessionRunState
  /** Number of pending permission and question requests of this session. */
  pendingAsks: number
  /** The gateway's clock now, and when it started this run (ms, same clock). */
  now: number
  startedAt: number
  /** This gateway aborted this run itself (`job.cancel`). */
  cancelledByGateway?: boolean
  /**
   * Rewrites the runtime's text (final text, error name and message) for the client; the error
   * message is cut after rewriting, so a cut never leaves part of a path or id behind. Default:
   * unchanged.
   */
  redact?: (text: string) => string
}

type End =
  | { kind: 'cancelled'; inferred?: true }
  | { kind: 'failed'; name: string; raw: unknown; inferred?: true }
  | { kind: 'completed'; inferred?: true }

/**
 * How the runtime recorded the end of a turn whose last answer is `last`, or `undefined` while
 * the turn may go on. An inferred end holds only if the session is idle after it.
 */
function recordedEnd(last: TurnMessage | undefined): End | undefined {
  if (last === undefined) return undefined
  const { error, time, finish } = last.info
  if (error) {
    if (error.name === 'MessageAbortedError') return { kind: 'cancelled' }
    return { kind: 'failed', name: error.name, raw: error.data?.message }
  }
  if (time.completed === undefined) return undefined
  // Completed with no finish and no error: an abort during the provider's retry back-off.
  if (finish === undefined) return { kind: 'cancelled' }
  if (!CONTINUES.has(finish)) return { kind: 'completed' }
  // A tool step: the runtime goes on with the next step unless the user refused a call (a
  // permission rejected without feedback, a dismissed question: the runtime's own error texts),
  // which stops the turn. Believed only from an idle session, and twice.
  return stepWasRefused(last) ? { kind: 'completed', inferred: true } : undefined
}

/** Error texts of the tool calls that end a turn (opencode 1.18.33: RejectedError, dismissal). */
const REFUSALS = new Set([
  'The user rejected permission to use this specific tool call.',
  'The user dismissed this question',
])

function stepWasRefused(message: TurnMessage): boolean {
  return message.parts.some((p) => {
    if (p.type !== 'tool') return false
    const state = p.state as { status?: unknown; error?: unknown } | undefined
    return state?.status === 'error' && typeof state.error === 'string' && REFUSALS.has(state.error.trim())
  })
}

/**
 * Derives the state of the run started by user message `messageId` from one consistent read:
 * - `missing` when that message is not in an idle session long after the start;
 * - while the session is busy or retrying and this job is its newest user message: `running`,
 *   or `input_required` with pending asks;
 * - otherwise from the runtime's record of the end: `cancelled` (aborted), `failed` (the
 *   runtime's error), `completed` (a final answer);
 * - a run with no record of its end in an idle session is `running` until it has shown no sign
 *   of life for {@link DEAD_AFTER_MS} (the runtime may not have begun it yet), then dead:
 *   `cancelled` with no answer at all (what an abort before the first answer leaves),
 *   `failed`/`Interrupted` with an unfinished one. This gateway's own cancel ends it at once.
 */
export function deriveJobState(input: DeriveInput): DerivedJobState {
  const { messages, messageId } = input
  const index = messages.findIndex((m) => m.info.id === messageId && m.info.role === 'user')
  if (index < 0) {
    // prompt_async answers before the user message is stored (seconds under load).
    const starting = input.session !== 'idle' || input.now - input.startedAt < START_GRACE_MS
    return starting ? { state: 'running' } : { state: 'missing', inferred: true }
  }
  const user = messages[index] as TurnMessage
  const run = runOf(messages, index)
  const turn = messages.filter(
    (m) => m.info.role === 'assistant' && m.info.parentID !== undefined && run.ids.has(m.info.parentID),
  )
  const last = turn.at(-1)
  const end = recordedEnd(last)
  // This gateway cancelled the run and keeps aborting it should it show up live (an abort that
  // came before the run began is lost): cancelled, unless the runtime recorded another end.
  if (input.cancelledByGateway && !end) return ended(input, turn, { kind: 'cancelled' })
  if (run.laterBegan) {
    // Runs of a session are sequential: a later run that has begun means this one is over.
    return end ? ended(input, turn, end, true) : dead(input, turn, last, true)
  }
  if (input.session !== 'idle') {
    if (run.active) return input.pendingAsks > 0 ? { state: 'input_required' } : { state: 'running' }
    // An older run while the session runs another: over once the runtime recorded its end.
    return end && !end.inferred ? ended(input, turn, end) : { state: 'running' }
  }
  if (end) return ended(input, turn, end)
  const quietFor = input.now - latestActivity(input.startedAt, user, turn)
  return quietFor < DEAD_AFTER_MS ? { state: 'running' } : dead(input, turn, last)
}

/** A run with no record of its end that will never end: no answer at all, or an unfinished one. */
function dead(
  input: DeriveInput,
  turn: readonly TurnMessage[],
  last: TurnMessage | undefined,
  definite = false,
): DerivedJobState {
  return last === undefined
    ? ended(input, turn, { kind: 'cancelled', inferred: true }, definite)
    : ended(input, turn, { kind: 'failed', name: INTERRUPTED, raw: undefined, inferred: true }, definite)
}

/**
 * The user messages of the run started at `index`: its own and the ones the runtime adds to
 * the same run (compaction, its synthetic "continue"), up to the next user message of a client.
 * `active` when no such later message exists; `laterBegan` when one exists and has an answer.
 */
function runOf(
  messages: readonly TurnMessage[],
  index: number,
): { ids: Set<string>; active: boolean; laterBegan: boolean } {
  const ids = new Set<string>([(messages[index] as TurnMessage).info.id])
  const later = new Set<string>()
  for (let i = index + 1; i < messages.length; i++) {
    const m = messages[i] as TurnMessage
    if (m.info.role === 'user') {
      if (later.size === 0 && runtimeMade(m)) ids.add(m.info.id)
      else later.add(m.info.id)
    } else if (m.info.parentID !== undefined && later.has(m.info.parentID)) {
      return { ids, active: false, laterBegan: true }
    }
  }
  return { ids, active: later.size === 0, laterBegan: false }
}

/** The id of the session's newest user message written by a client (not by the runtime). */
export function newestRun(messages: readonly TurnMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as TurnMessage
    if (m.info.role === 'user' && !runtimeMade(m)) return m.info.id
  }
  return undefined
}

/** A user message the runtime wrote itself: only synthetic text and compaction parts. */
function runtimeMade(message: TurnMessage): boolean {
  return (
    message.parts.length > 0 &&
    message.parts.every((p) => p.type === 'compaction' || (p.type === 'text' && p.synthetic === true))
  )
}

/** The terminal state of an end; `definite` drops the need to confirm an inferred one. */
function ended(
  input: DeriveInput,
  turn: readonly TurnMessage[],
  end: End,
  definite = false,
): DerivedJobState {
  const redact = input.redact ?? ((text: string) => text)
  const usage = sumUsage(turn)
  const text = redact(finalText(turn))
  const inferred = end.inferred && !definite ? { inferred: true as const } : {}
  switch (end.kind) {
    case 'cancelled':
      return { state: 'cancelled', text, usage, ...inferred }
    case 'completed':
      return { state: 'completed', text, usage, ...inferred }
    case 'failed': {
      if (end.name === INTERRUPTED) {
        const error = { name: INTERRUPTED, message: 'The run was interrupted.' }
        return { state: 'failed', error, text, usage, ...inferred }
      }
      // The provider's message may quote a key: secrets by shape go too (known ones by value
      // went with `redact`), then the cut.
      const message = truncate(
        redactSecrets(redact(typeof end.raw === 'string' && end.raw !== '' ? end.raw : end.name)),
        500,
      )
      return { state: 'failed', error: { name: redact(end.name), message }, text, usage, ...inferred }
    }
  }
}

/**
 * The newest sign of life of a run: its start (gateway clock), its user message, and every time
 * stamp of its answer (runtime clock; the two run on one host). A runtime clock ahead of the
 * gateway's only makes the run look alive longer.
 */
export function latestActivity(startedAt: number, user: TurnMessage, turn: readonly TurnMessage[]): number {
  let latest = Math.max(startedAt, user.info.time.created)
  const see = (value: unknown): void => {
    if (typeof value === 'number' && Number.isFinite(value) && value > latest) latest = value
  }
  const seeTime = (time: unknown): void => {
    if (time && typeof time === 'object') {
      for (const value of Object.values(time as Record<string, unknown>)) see(value)
    }
  }
  for (const message of turn) {
    seeTime(message.info.time)
    for (const part of message.parts) {
      seeTime(part.time)
      seeTime((part.state as { time?: unknown } | undefined)?.time)
    }
  }
  return latest
}

/** The text of the turn's last assistant message that has any text (the final answer). */
export function finalText(turn: readonly TurnMessage[]): string {
  for (let i = turn.length - 1; i >= 0; i--) {
    const text = messageText(turn[i] as TurnMessage)
    if (text !== '') return text
  }
  return ''
}

/** Concatenated visible text parts of one message. */
export function messageText(message: TurnMessage): string {
  return message.parts
    .filter(
      (p) => p.type === 'text' && typeof p.text === 'string' && p.synthetic !== true && p.ignored !== true,
    )
    .map((p) => p.text as string)
    .join('')
    .trim()
}

function sumUsage(turn: readonly TurnMessage[]): Usage {
  const usage: Usage = { cost: 0, input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
  for (const { info } of turn) {
    usage.cost += info.cost ?? 0
    usage.input += info.tokens?.input ?? 0
    usage.output += info.tokens?.output ?? 0
    usage.reasoning += info.tokens?.reasoning ?? 0
    usage.cacheRead += info.tokens?.cache?.read ?? 0
    usage.cacheWrite += info.tokens?.cache?.write ?? 0
  }
  usage.cost = Math.round(usage.cost * 1e6) / 1e6
  return usage
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}
