import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { lstat, mkdir, open, realpath } from 'node:fs/promises'
import { join } from 'node:path'
import type { Message, UpstreamClient } from '@sallyport/upstream-client'
import type { RunRecord } from './history.ts'
import { checkOutputPath, DEFAULT_OUTPUT, expandOutputPath } from './output-path.ts'
import { sanitizeMessage } from './sanitize.ts'
import { type TaskDefinition, withGuidance } from './task-source.ts'

/** The agent profile every scheduled run uses: unattended, nothing may ask, read-only. */
export const SCHEDULED_AGENT = 'scheduled'
/** Metadata key of a run's session: the task id (host-side only; the gateway never lists these). */
export const TASK_METADATA_KEY = 'sallyportTask'

/** The runtime operations a run needs (an `UpstreamClient` has them). */
export type RunRuntime = Pick<
  UpstreamClient,
  | 'createSession'
  | 'promptAsync'
  | 'listMessages'
  | 'listPermissions'
  | 'replyPermission'
  | 'listQuestions'
  | 'rejectQuestion'
  | 'settleSession'
  | 'newMessageId'
  | 'events'
>

export interface RunTaskInput {
  readonly runtime: RunRuntime
  readonly task: TaskDefinition
  readonly knowledgeDir: string
  readonly trigger: RunRecord['trigger']
  /** Aborting (the scheduler stopping) ends the run as `cancelled`. */
  readonly signal?: AbortSignal
  readonly now?: () => number
  /** The agent profile (default `scheduled`). */
  readonly agent?: string
}

/**
 * One run: a session on the native server with the `scheduled` profile, the prompt (guidance in
 * front), a wait bounded by the task's timeout (aborting the session on timeout), the final answer
 * written to the output destination, and the record for the history. Any ask that appears (the
 * profile allows none) is rejected at once: nobody is there to answer it. Never throws.
 */
export async function runTask(input: RunTaskInput): Promise<RunRecord> {
  const { runtime, task } = input
  const now = input.now ?? Date.now
  const started = now()
  const at = new Date(started).toISOString()
  const deadline = started + task.timeoutSeconds * 1000
  const budget = (): number => Math.max(1, deadline - now())
  const record = (outcome: RunRecord['outcome'], extra: Partial<RunRecord> = {}): RunRecord => ({
    at,
    trigger: input.trigger,
    outcome,
    durationMs: Math.max(0, now() - started),
    ...extra,
  })
  if (input.signal?.aborted) return record('cancelled')
  const output = expandOutputPath(task.output ?? DEFAULT_OUTPUT, task.id, new Date(started))
  const outputProblem = checkOutputPath(output)
  if (outputProblem) return record('failed', { error: `output ${outputProblem}` })
  let sessionId: string | undefined
  const stop = new AbortController()
  const onAbort = (): void => stop.abort()
  input.signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const session = await runtime.createSession(
      {
        title: `Scheduled task ${task.id}`,
        agent: input.agent ?? SCHEDULED_AGENT,
        metadata: { [TASK_METADATA_KEY]: task.id, run: randomBytes(6).toString('hex') },
      },
      { timeoutMs: Math.min(budget(), 30_000) },
    )
    sessionId = session.id
    const messageID = runtime.newMessageId()
    const [providerID, ...rest] = task.model?.split('/') ?? []
    await runtime.promptAsync(
      session.id,
      {
        messageID,
        agent: input.agent ?? SCHEDULED_AGENT,
        ...(providerID && rest.length > 0 && { model: { providerID, modelID: rest.join('/') } }),
        parts: [{ type: 'text', text: withGuidance(task.prompt) }],
      },
      { timeoutMs: Math.min(budget(), 30_000) },
    )
    const id = session.id
    const asks = rejectAsks(runtime, id, stop.signal)
    const answered = runtime.events.waitUntil(
      id,
      // A read that fails (a busy runtime) is looked at again at the next event or poll.
      async () =>
        finished(
          (await runtime.listMessages(id, {}, { timeoutMs: 30_000 }).catch(() => undefined))?.messages ?? [],
          messageID,
        ),
      { timeoutMs: budget(), signal: stop.signal },
    )
    const failing = runtime.events
      .waitFor(id, (event) => event.type === 'session.error', { timeoutMs: budget(), signal: stop.signal })
      .then((event) => (event === undefined ? NEVER : ({ error: errorOf(event.properties) } as Finished)))
    answered.catch(() => {})
    failing.catch(() => {})
    let result: Finished | typeof ABORTED | undefined
    try {
      result = await Promise.race([answered, failing, aborted(stop.signal)])
    } finally {
      stop.abort()
      await asks.catch(() => {})
    }
    if (result === undefined || result === ABORTED) {
      await runtime.settleSession(id, { timeoutMs: 10_000 }).catch(() => {})
      return record(result === ABORTED && input.signal?.aborted ? 'cancelled' : 'timeout', {
        ...(result !== ABORTED && { error: `no answer within ${task.timeoutSeconds}s: aborted` }),
      })
    }
    if (result.error !== undefined) return record('failed', { error: result.error })
    try {
      await writeResult(input.knowledgeDir, output, result.text ?? '')
    } catch (error) {
      return record('failed', { error: `the result could not be written (${codeOf(error)})` })
    }
    return record('completed', { output })
  } catch (error) {
    if (sessionId !== undefined) await runtime.settleSession(sessionId, { timeoutMs: 10_000 }).catch(() => {})
    if (input.signal?.aborted) return record('cancelled')
    return record('failed', { error: `the runtime request failed (${codeOf(error)})` })
  } finally {
    input.signal?.removeEventListener('abort', onAbort)
  }
}

interface Finished {
  readonly error?: string
  readonly text?: string
}
const ABORTED = Symbol('aborted')
const NEVER = new Promise<never>(() => {})

function aborted(signal: AbortSignal): Promise<typeof ABORTED> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(ABORTED)
    else signal.addEventListener('abort', () => resolve(ABORTED), { once: true })
  })
}

/** Rejects every permission ask and question of the session until `signal` aborts. */
async function rejectAsks(runtime: RunRuntime, sessionId: string, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const event = await runtime.events.waitFor(
      sessionId,
      (e) => e.type === 'permission.asked' || e.type === 'question.asked',
      { timeoutMs: 30_000, signal },
    )
    if (signal.aborted) return
    // Look every 30 s as well: an ask raised while the stream reconnected has no event here.
    const [permissions, questions] = await Promise.all([
      runtime.listPermissions(sessionId, { timeoutMs: 10_000 }).catch(() => []),
      runtime.listQuestions(sessionId, { timeoutMs: 10_000 }).catch(() => []),
    ])
    for (const ask of permissions)
      await runtime
        .replyPermission(ask.id, 'reject', 'This is an unattended scheduled task: nobody can approve this.', {
          timeoutMs: 10_000,
        })
        .catch(() => {})
    for (const question of questions)
      await runtime.rejectQuestion(question.id, { timeoutMs: 10_000 }).catch(() => {})
    void event
  }
}

/** The turn's last assistant message once complete: its text, or its error. */
function finished(messages: readonly Message[], messageID: string): Finished | undefined {
  const mine = messages.filter(
    (m) => m.info.role === 'assistant' && (m.info as { parentID?: string }).parentID === messageID,
  )
  const last = mine.at(-1)
  if (!last) return undefined
  const info = last.info as { time: { completed?: number }; error?: unknown; finish?: string }
  if (info.error) return { error: errorOf({ error: info.error }) }
  if (info.time.completed === undefined || info.finish === 'tool-calls') return undefined
  const text = last.parts
    .filter((part) => part.type === 'text' && !(part as { synthetic?: boolean }).synthetic)
    .map((part) => (part as { text: string }).text)
    .join('\n')
  return { text }
}

/** `Name: message` of a runtime error, sanitized (no keys, no host paths). */
function errorOf(properties: unknown): string {
  const error = (properties as { error?: { name?: unknown; data?: { message?: unknown } } } | undefined)
    ?.error
  const name = typeof error?.name === 'string' ? error.name : 'Error'
  const message = typeof error?.data?.message === 'string' ? sanitizeMessage(error.data.message) : ''
  return message ? `${name}: ${message}` : name
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'error'
}

/**
 * Writes the result under the knowledge directory without following any symlink: each directory
 * on the way is created or must be a real directory, the final parent must still resolve inside
 * the knowledge directory, and the file is opened with O_NOFOLLOW.
 */
export async function writeResult(knowledgeDir: string, relative: string, text: string): Promise<void> {
  const root = await realpath(knowledgeDir)
  const segments = relative.split('/')
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..'))
    throw Object.assign(new Error('bad path'), { code: 'EINVAL' })
  let dir = root
  for (const segment of segments.slice(0, -1)) {
    dir = join(dir, segment)
    await mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error
    })
    const info = await lstat(dir)
    if (!info.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' })
  }
  const real = await realpath(dir)
  if (real !== root && !real.startsWith(`${root}/`))
    throw Object.assign(new Error('outside'), { code: 'EXDEV' })
  const file = join(real, segments.at(-1) ?? 'result.md')
  const handle = await open(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    0o600,
  )
  try {
    await handle.writeFile(text.endsWith('\n') ? text : `${text}\n`, 'utf8')
  } finally {
    await handle.close()
  }
}
