// Job state is never stored: it is derived from the runtime's own records every time, so any
// gateway replica answers the same and an old completed job stays deterministic.

/** The fields of an upstream message the derivation reads. */
export interface TurnMessage {
  info: {
    id: string
    role: string
    parentID?: string
    time: { created: number; completed?: number }
    error?: { name: string; data?: { message?: unknown } }
    finish?: string
    cost?: number
    tokens?: {
      input?: number
      output?: number
      reasoning?: number
      cache?: { read?: number; write?: number }
    }
  }
  parts: ReadonlyArray<{
    type: string
    text?: unknown
    synthetic?: unknown
    ignored?: unknown
    tool?: unknown
    state?: unknown
  }>
}

/** Error name of a run whose answer was left unfinished while the session went idle. */
export const INTERRUPTED = 'Interrupted'

export type SessionRunState = 'idle' | 'busy' | 'retry'

export type DerivedJobState =
  | { state: 'running' }
  | { state: 'input_required' }
  | { state: 'completed'; text: string; usage: Usage }
  | { state: 'failed'; error: { name: string; message: string }; text: string; usage: Usage }
  | { state: 'cancelled'; text: string; usage: Usage }
  | { state: 'missing' }

export interface Usage {
  cost: number
  input: number
  output: number
  reasoning: number
  cacheRead: number
  cacheWrite: number
}

export interface DeriveInput {
  /** The session's messages, oldest first. */
  messages: readonly TurnMessage[]
  /** The job's user message id. */
  messageId: string
  session: SessionRunState
  /** Number of pending permission and question requests of this session. */
  pendingAsks: number
  /**
   * The gateway started this run moments ago. `prompt_async` answers before the runtime has
   * stored the user message (and sometimes before the session reads busy), so a missing
   * message of a just-started run means "starting", not "gone".
   */
  justStarted?: boolean
  /** The prompt was sent moments ago (a few seconds): an idle session may not read busy yet. */
  justPrompted?: boolean
  /**
   * Rewrites the runtime's text (final text, error name and message) for the client; the error
   * message is cut after rewriting, so a cut never leaves part of a path or id behind. Default:
   * unchanged.
   */
  redact?: (text: string) => string
}

/**
 * Derives the state of the run started by user message `messageId`:
 * - `missing` when that message is not in the session (deleted, reverted, never created);
 * - the session's active run is its newest user message; while the session is busy or retrying
 *   and this job is that run it is `input_required` with pending asks, otherwise `running`;
 * - otherwise the run is over: `cancelled` when its last assistant message was aborted,
 *   `failed` with the runtime's error, else `completed` with the final text.
 */
export function deriveJobState(input: DeriveInput): DerivedJobState {
  const { messages, messageId } = input
  const index = messages.findIndex((m) => m.info.id === messageId && m.info.role === 'user')
  if (index < 0)
    return input.session === 'idle' && !input.justStarted ? { state: 'missing' } : { state: 'running' }
  const turn = messages.filter((m) => m.info.role === 'assistant' && m.info.parentID === messageId)
  const newestUser = findLast(messages, (m) => m.info.role === 'user')
  const isActiveRun = newestUser?.info.id === messageId
  if (isActiveRun && input.session !== 'idle') {
    return input.pendingAsks > 0 ? { state: 'input_required' } : { state: 'running' }
  }
  const redact = input.redact ?? ((text: string) => text)
  const usage = sumUsage(turn)
  const last = turn.at(-1)
  const text = redact(finalText(turn))
  if (last?.info.error) {
    const { name } = last.info.error
    if (name === 'MessageAbortedError') return { state: 'cancelled', text, usage }
    const raw = last.info.error.data?.message
    const message = truncate(redact(typeof raw === 'string' && raw !== '' ? raw : name), 500)
    return { state: 'failed', error: { name: redact(name), message }, text, usage }
  }
  if (isActiveRun && last === undefined && input.justPrompted) {
    // prompt_async answers before the runtime marks the session busy: idle with no answer yet,
    // moments after the prompt, is a run that is starting.
    return { state: 'running' }
  }
  if (isActiveRun && last === undefined) {
    // Idle with no answer at all: the run was aborted before the model produced anything
    // (an abort during retry back-off leaves exactly this), or the process was restarted.
    return { state: 'cancelled', text: '', usage }
  }
  if (last !== undefined && last.info.time.completed === undefined) {
    // A turn killed with the process (SIGTERM) leaves an unfinished message and an idle session.
    return {
      state: 'failed',
      error: { name: INTERRUPTED, message: 'The run was interrupted.' },
      text,
      usage,
    }
  }
  return { state: 'completed', text, usage }
}

function findLast<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as T
    if (predicate(item)) return item
  }
  return undefined
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
