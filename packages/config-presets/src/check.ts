import { randomBytes } from 'node:crypto'
import { type Message, sanitizeProviderMessage, type UpstreamClient } from '@sallyport/upstream-client'
import { PresetError } from './errors.js'
import { checkModelId, checkPresetId } from './validate.js'

// The readiness check: one short request through the runtime itself with the chosen model, in a
// session of its own (the chat profile: every tool denied but `question`) that is deleted
// afterwards, whatever happens (also when the caller aborts: Ctrl-C).
// An answer proves that the runtime reaches the server and the model answers (inference); it says
// nothing of tool calls, which a listing does not prove either.

/** The runtime operations the check uses (an `UpstreamClient` has them). */
export type CheckRuntime = Pick<
  UpstreamClient,
  | 'createSession'
  | 'listSessions'
  | 'promptAsync'
  | 'listMessages'
  | 'deleteSession'
  | 'newMessageId'
  | 'events'
>

/** Metadata key of a check's session: a random token, to find the session when its creation seemed to fail. */
export const CHECK_METADATA_KEY = 'sallyportPresetCheck'

/** What the check proved. */
export interface Readiness {
  /** `<id>/<model>`. */
  readonly model: string
  /** `proven`: the model answered through the runtime; `failed`: it did not (see `reason`). */
  readonly inference: 'proven' | 'failed'
  /** Tool calls are not exercised by the check: never proven here. */
  readonly toolCalls: 'not proven'
  /**
   * Why inference failed: the runtime's error name with the provider's message (keys, tokens and
   * host paths removed: `sanitizeProviderMessage`), the retry the runtime started, or a timeout.
   */
  readonly reason?: string
  readonly elapsedMs: number
}

/** The agent profile the check runs as: the chat profile (every tool denied but `question`). */
export const CHECK_AGENT = 'remote'
const PROMPT = 'Readiness check: reply with the single word READY.'

export async function checkReadiness(options: {
  runtime: CheckRuntime
  /**
   * The provider (preset) id and model to check; both left out: the model the runtime uses when a
   * request names none (its configured default, else its own fallback), named in the result from
   * the runtime's answer (`default model` when the runtime never said which).
   */
  id?: string
  model?: string
  /** Default 60 000 ms (a cold local model can take long to load). */
  timeoutMs?: number
  /** Aborting (Ctrl-C) stops the wait; the session is still deleted before the result comes back. */
  signal?: AbortSignal
}): Promise<Readiness> {
  if ((options.id === undefined) !== (options.model === undefined))
    throw new PresetError('ERR_PRESET_INVALID_MODEL', 'checkReadiness: give both id and model, or neither')
  const chosen =
    options.id === undefined || options.model === undefined
      ? undefined
      : { providerID: checkPresetId(options.id), modelID: checkModelId(options.model) }
  const { runtime } = options
  let qualified = chosen ? `${chosen.providerID}/${chosen.modelID}` : 'default model'
  const started = Date.now()
  const until = started + (options.timeoutMs ?? 60_000)
  const budget = (): number => Math.max(1, until - Date.now())
  const done = (inference: 'proven' | 'failed', reason?: string): Readiness => ({
    model: qualified,
    inference,
    toolCalls: 'not proven',
    ...(reason !== undefined ? { reason } : {}),
    elapsedMs: Date.now() - started,
  })
  let sessionId: string | undefined
  const token = randomBytes(12).toString('hex')
  try {
    try {
      sessionId = (
        await runtime.createSession(
          { title: 'sallyport preset check', agent: CHECK_AGENT, metadata: { [CHECK_METADATA_KEY]: token } },
          { timeoutMs: budget() },
        )
      ).id
    } catch (cause) {
      // The runtime may have made the session and its answer got lost (a timeout here): found by
      // its token and deleted.
      await deleteByToken(runtime, token)
      throw new PresetError(
        'ERR_PRESET_RUNTIME',
        `the runtime did not open a session for the check (${nameOf(cause)})`,
        {
          cause,
        },
      )
    }
    const session = sessionId
    const messageID = runtime.newMessageId()
    await runtime.promptAsync(
      session,
      {
        messageID,
        agent: CHECK_AGENT,
        ...(chosen && { model: chosen }),
        parts: [{ type: 'text', text: PROMPT }],
      },
      { timeoutMs: budget() },
    )
    // The answer, or an error the runtime reports for the session without writing an answer (a
    // model it cannot resolve, a provider it has disabled), or the runtime starting to retry a
    // failed provider request (it retries a network error without end, a server error for about
    // 70 s: the check reports the first failure instead of waiting that out): whichever comes first.
    const stopWaiting = new AbortController()
    const waiting = runtime.events.waitUntil(
      session,
      async () =>
        finished((await runtime.listMessages(session, {}, { timeoutMs: budget() })).messages, messageID),
      { timeoutMs: budget(), signal: stopWaiting.signal },
    )
    const failing = runtime.events
      .waitFor(
        session,
        (event) =>
          event.type === 'session.error' ||
          (event.type === 'session.status' &&
            (event.properties as { status?: { type?: unknown } }).status?.type === 'retry'),
        { timeoutMs: budget(), signal: stopWaiting.signal },
      )
      .then((event) =>
        event === undefined
          ? NEVER
          : event.type === 'session.status'
            ? { error: retryDescription(event.properties) }
            : { error: errorDescription((event.properties as { error?: unknown }).error) },
      )
    waiting.catch(() => {})
    failing.catch(() => {})
    const first = Promise.race([waiting, failing])
    let answer: Awaited<typeof waiting> | typeof ABORTED
    try {
      answer = await (options.signal ? untilAborted(first, options.signal) : first)
    } finally {
      stopWaiting.abort()
    }
    if (answer === ABORTED) return done('failed', 'interrupted')
    if (!chosen) qualified = (await modelOfTurn(runtime, session, messageID)) ?? qualified
    if (answer === undefined) return done('failed', `no answer within ${options.timeoutMs ?? 60_000} ms`)
    if (answer.error !== undefined) return done('failed', `the runtime reported ${answer.error}`)
    return done('proven')
  } catch (error) {
    if (PresetError.isInstance(error)) throw error
    return done('failed', `the request failed (${nameOf(error)})`)
  } finally {
    if (sessionId !== undefined) await runtime.deleteSession(sessionId, { timeoutMs: 10_000 }).catch(() => {})
  }
}

const ABORTED = Symbol('aborted')
/** A promise that never settles (a wait that ended without its event loses the race). */
const NEVER = new Promise<never>(() => {})

/**
 * A runtime error as "APIError: <the provider's message>": the name, and the message with keys,
 * tokens and host paths removed (it may quote the server's answer or the request).
 */
function errorDescription(error: unknown): string {
  const { name, data } = (error ?? {}) as { name?: unknown; data?: { message?: unknown } }
  const message = sanitizeProviderMessage(data?.message)
  const label = typeof name === 'string' ? name : 'an error'
  return message === undefined ? label : `${label}: ${message}`
}

/** A `session.status` retry as "the provider failed and the runtime is retrying (attempt N): <message>". */
function retryDescription(properties: unknown): string {
  const status = (properties as { status?: { attempt?: unknown; message?: unknown } }).status ?? {}
  const message = sanitizeProviderMessage(status.message)
  const attempt = typeof status.attempt === 'number' ? ` (attempt ${status.attempt})` : ''
  return `a failed provider request, which it retries${attempt}${message === undefined ? '' : `: ${message}`}`
}
/** `promise`, or ABORTED as soon as `signal` aborts (the promise is left to settle on its own). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

/** Deletes the sessions carrying `token` (best effort: the runtime may be down). */
async function deleteByToken(runtime: CheckRuntime, token: string): Promise<void> {
  try {
    for (const session of await runtime.listSessions({}, { timeoutMs: 10_000 }))
      if ((session.metadata as Record<string, unknown> | undefined)?.[CHECK_METADATA_KEY] === token)
        await runtime.deleteSession(session.id, { timeoutMs: 10_000 })
  } catch {
    // Nothing more to do from here.
  }
}

/** `provider/model` of the turn's answer, as the runtime chose it (undefined when it cannot tell). */
async function modelOfTurn(
  runtime: CheckRuntime,
  session: string,
  messageID: string,
): Promise<string | undefined> {
  try {
    const { messages } = await runtime.listMessages(session, {}, { timeoutMs: 5_000 })
    const info = messages.find(
      (m) => m.info.role === 'assistant' && (m.info as { parentID?: string }).parentID === messageID,
    )?.info as { providerID?: unknown; modelID?: unknown } | undefined
    return typeof info?.providerID === 'string' && typeof info.modelID === 'string'
      ? `${info.providerID}/${info.modelID}`
      : undefined
  } catch {
    return undefined
  }
}

/** The turn's last assistant message once it is complete: its error, if any. */
function finished(messages: readonly Message[], messageID: string): { error?: string } | undefined {
  const last = messages
    .filter((m) => m.info.role === 'assistant' && (m.info as { parentID?: string }).parentID === messageID)
    .at(-1)
  if (!last) return undefined
  const info = last.info as { time: { completed?: number }; error?: { name?: unknown }; finish?: string }
  if (info.error) return { error: errorDescription(info.error) }
  if (info.time.completed === undefined || info.finish === 'tool-calls') return undefined
  return {}
}

function nameOf(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code
  return typeof code === 'string' ? code : cause instanceof Error ? cause.name : 'unknown error'
}
