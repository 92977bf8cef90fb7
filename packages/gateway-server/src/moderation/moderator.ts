import { randomBytes } from 'node:crypto'
import { MODERATOR_AGENT } from '@sallyport/policy'
import type { Message, UpstreamClient } from '@sallyport/upstream-client'
import {
  type BlockCategory,
  MODERATOR_SYSTEM,
  moderationPrompt,
  parseVerdict,
  type ScreenedKind,
} from './verdict.js'

// The moderator runtime, asked one question per escalated input: an ephemeral session (created,
// prompted, read, deleted — also on error, timeout and shutdown), a small pool with a bounded
// queue where credentials take turns (one credential's inputs cannot fill it or keep another's
// waiting behind them), a per-input deadline that includes the wait for the pool, and a sweep that deletes
// moderation sessions a crash left behind. Every way this can go wrong ends as `unavailable`,
// which the screening turns into a block: nothing here fails open.

/** The outcome of one classification. */
export type Classification =
  | { outcome: 'allow' }
  | { outcome: 'block'; category: BlockCategory }
  | {
      outcome: 'unavailable'
      /** overloaded: the queue is full; timeout: past the deadline; unreachable: the runtime failed; unparseable: the answer was not a verdict. */
      reason: 'overloaded' | 'timeout' | 'unreachable' | 'unparseable' | 'closed'
    }

export interface ModeratorOptions {
  /** A client of the moderator runtime (its own Basic credential and working directory). */
  client: UpstreamClient
  /** `provider/model`; default the runtime's `small_model`, else its `model` (read once). */
  model?: string
  /** Per-input deadline, queue wait included. Default 20 000 ms. */
  deadlineMs?: number
  /** Classifications at once. Default 2. */
  concurrency?: number
  /** Inputs waiting for the pool; beyond it, `overloaded`. Default 32. */
  queueLimit?: number
  /**
   * Inputs of one party (see `fairnessKey`) waiting for the pool; beyond it, `overloaded`, so one
   * party cannot fill the queue. Default a quarter of `queueLimit` (8 of 32), at least 1.
   */
  queueLimitPerParty?: number
  /**
   * Whose input is being classified (the gateway passes its credential `fairnessKey`): waiting
   * inputs are admitted by turns across parties, oldest first within one. Default: one party.
   */
  fairnessKey?: () => string | undefined
  /** Sweep for left-over moderation sessions every this often (0: never). Default 60 000 ms. */
  sweepEveryMs?: number
  now?: () => number
}

export interface Moderator {
  /** Classifies one input; never rejects. */
  classify(text: string, kind: ScreenedKind): Promise<Classification>
  /** Whether the moderator runtime answers its health check (cached for 2 s). */
  reachable(): Promise<boolean>
  /** Deletes moderation sessions older than the deadline (left by a crash); returns how many. */
  sweep(): Promise<number>
  /** Classifications in progress and waiting. */
  load(): { active: number; queued: number }
  /** Stops taking inputs, answers the queued ones `closed`, deletes the sessions in flight. */
  close(): Promise<void>
}

/** Marks the sessions this gateway creates on the moderator (metadata key). */
export const MODERATION_METADATA_KEY = 'sallyportModeration'
/** Names one creation (metadata key), so a session whose creation timed out can still be found. */
const MODERATION_TOKEN_KEY = 'sallyportModerationToken'
/** How long the health check of the moderator runtime may take, in all (`reachable`). */
export const REACHABLE_TIMEOUT_MS = 1_500
/** When a creation that did not answer in time is looked for again, after it failed. */
const LATE_CREATION_DELAYS_MS = [1_000, 5_000, 15_000] as const

const AGENT = MODERATOR_AGENT

/**
 * Creates the moderator client. Options are checked here (`RangeError`, `TypeError`).
 * @example const moderator = createModerator({ client: createUpstreamClient({ … }) })
 */
export function createModerator(options: ModeratorOptions): Moderator {
  const { client } = options
  const now = options.now ?? Date.now
  const deadlineMs = positive('deadlineMs', options.deadlineMs, 20_000)
  const concurrency = positive('concurrency', options.concurrency, 2)
  const queueLimit = positive('queueLimit', options.queueLimit, 32, true)
  const queueLimitPerParty = positive(
    'queueLimitPerParty',
    options.queueLimitPerParty,
    Math.max(1, Math.ceil(queueLimit / 4)),
    true,
  )
  const partyOf = (): string => options.fairnessKey?.() ?? ''
  const configured = options.model === undefined ? undefined : parseModel(options.model)
  let resolvedModel: { providerID: string; modelID: string } | undefined = configured
  let active = 0
  let closed = false
  // Waiting inputs by party; the map's order is the order of turns (a party that was served and
  // still waits goes to the end).
  const queues = new Map<string, Array<(admitted: boolean) => void>>()
  let queued = 0
  const inFlight = new Set<string>()
  let health: { at: number; value: boolean } | undefined

  const model = async (): Promise<{ providerID: string; modelID: string } | undefined> => {
    if (resolvedModel) return resolvedModel
    const config = (await client.getConfig({ timeoutMs: 5_000 })) as {
      small_model?: unknown
      model?: unknown
    }
    const name = typeof config.small_model === 'string' ? config.small_model : config.model
    if (typeof name === 'string') resolvedModel = parseModel(name)
    return resolvedModel
  }

  /** Waits for a pool slot until `until`; false when the deadline passed or the client closed. */
  const admit = (until: number, party: string): Promise<boolean> => {
    if (closed) return Promise.resolve(false)
    if (active < concurrency) {
      active++
      return Promise.resolve(true)
    }
    return new Promise((resolve) => {
      const entry = (admitted: boolean): void => {
        clearTimeout(timer)
        resolve(admitted)
      }
      const timer = setTimeout(
        () => {
          const waiting = queues.get(party)
          const at = waiting?.indexOf(entry) ?? -1
          if (waiting && at >= 0) {
            waiting.splice(at, 1)
            queued--
            if (waiting.length === 0) queues.delete(party)
          }
          resolve(false)
        },
        Math.max(0, until - now()),
      )
      const waiting = queues.get(party)
      if (waiting) waiting.push(entry)
      else queues.set(party, [entry])
      queued++
    })
  }
  /** Hands the freed slot to the oldest input of the party whose turn it is. */
  const release = (): void => {
    const first = queues.entries().next()
    if (first.done) {
      active--
      return
    }
    const [party, waiting] = first.value
    const next = waiting.shift() as (admitted: boolean) => void
    queued--
    queues.delete(party)
    if (waiting.length > 0) queues.set(party, waiting)
    next(true)
  }

  const deleteSession = async (id: string): Promise<void> => {
    try {
      await client.deleteSession(id, { timeoutMs: 10_000 })
    } catch {
      // Left for the sweep (its metadata marks it).
    } finally {
      inFlight.delete(id)
    }
  }

  // A creation the client gave up on (its deadline passed) may still complete on the runtime. Each
  // creation carries a token; when it did not answer, the sessions with that token are looked for
  // and deleted a few times over the next seconds instead of waiting for the periodic sweep.
  const lateCreations = new Set<ReturnType<typeof setTimeout>>()
  const deleteLateCreation = (token: string, attempt = 0): void => {
    const timer = setTimeout(async () => {
      lateCreations.delete(timer)
      let found = false
      try {
        const sessions = await client.listSessions({}, { timeoutMs: 10_000 })
        for (const session of sessions) {
          const meta = session.metadata as Record<string, unknown> | undefined
          if (meta?.[MODERATION_TOKEN_KEY] !== token) continue
          found = true
          await deleteSession(session.id)
        }
      } catch {
        // The next attempt, or the sweep, deletes it.
      }
      if (!found && attempt < LATE_CREATION_DELAYS_MS.length - 1 && !closed)
        deleteLateCreation(token, attempt + 1)
    }, LATE_CREATION_DELAYS_MS[attempt])
    timer.unref()
    lateCreations.add(timer)
  }

  const ask = async (text: string, kind: ScreenedKind, until: number): Promise<Classification> => {
    let chosen: { providerID: string; modelID: string } | undefined
    try {
      chosen = await model()
    } catch {
      return { outcome: 'unavailable', reason: 'unreachable' }
    }
    const budget = (): number => Math.max(1, until - now())
    let sessionId: string | undefined
    const token = randomBytes(12).toString('hex')
    try {
      const session = await client
        .createSession(
          {
            title: 'sallyport moderation',
            agent: AGENT,
            metadata: { [MODERATION_METADATA_KEY]: now(), [MODERATION_TOKEN_KEY]: token },
          },
          { timeoutMs: budget() },
        )
        .catch((error: unknown) => {
          deleteLateCreation(token)
          throw error
        })
      sessionId = session.id
      inFlight.add(session.id)
      const messageID = client.newMessageId()
      const nonce = randomBytes(16).toString('hex')
      await client.promptAsync(
        session.id,
        {
          messageID,
          agent: AGENT,
          system: MODERATOR_SYSTEM,
          ...(chosen && { model: chosen }),
          parts: [{ type: 'text', text: moderationPrompt(text, kind, nonce) }],
        },
        { timeoutMs: budget() },
      )
      const answer = await client.events.waitUntil(
        session.id,
        async () => {
          const page = await client.listMessages(session.id, {}, { timeoutMs: budget() })
          return finishedAnswer(page.messages, messageID)
        },
        { timeoutMs: budget() },
      )
      if (answer === undefined) return { outcome: 'unavailable', reason: 'timeout' }
      if (answer.failed) return { outcome: 'unavailable', reason: 'unreachable' }
      const verdict = parseVerdict(answer.text)
      if (!verdict) return { outcome: 'unavailable', reason: 'unparseable' }
      return verdict.verdict === 'allow'
        ? { outcome: 'allow' }
        : { outcome: 'block', category: verdict.category }
    } catch {
      return { outcome: 'unavailable', reason: now() >= until ? 'timeout' : 'unreachable' }
    } finally {
      if (sessionId !== undefined) await deleteSession(sessionId)
    }
  }

  const sweep = async (): Promise<number> => {
    const sessions = await client.listSessions({}, { timeoutMs: 10_000 })
    let deleted = 0
    for (const session of sessions) {
      const stamp = (session.metadata as Record<string, unknown> | undefined)?.[MODERATION_METADATA_KEY]
      if (typeof stamp !== 'number' || inFlight.has(session.id)) continue
      if (now() - session.time.created < deadlineMs * 2) continue
      await deleteSession(session.id)
      deleted++
    }
    return deleted
  }
  const sweepEveryMs = options.sweepEveryMs ?? 60_000
  const sweeper =
    sweepEveryMs > 0
      ? setInterval(() => {
          sweep().catch(() => undefined)
        }, sweepEveryMs)
      : undefined
  sweeper?.unref()

  return {
    async classify(text, kind) {
      const until = now() + deadlineMs
      if (closed) return { outcome: 'unavailable', reason: 'closed' }
      const party = partyOf()
      if (
        active >= concurrency &&
        (queued >= queueLimit || (queues.get(party)?.length ?? 0) >= queueLimitPerParty)
      )
        return { outcome: 'unavailable', reason: 'overloaded' }
      if (!(await admit(until, party)))
        return { outcome: 'unavailable', reason: closed ? 'closed' : 'timeout' }
      try {
        return await ask(text, kind, until)
      } finally {
        release()
      }
    },
    async reachable() {
      if (health && now() - health.at < 2_000) return health.value
      let value = false
      try {
        // One try, bounded: `/health` waits for this, and must answer promptly while the
        // moderator hangs (a read that gets no answer would otherwise be sent twice: 4 s, past
        // `sallyport health`'s 3 s and a container's health check).
        const bound = { timeoutMs: REACHABLE_TIMEOUT_MS, signal: AbortSignal.timeout(REACHABLE_TIMEOUT_MS) }
        value = (await client.health(bound)).healthy
      } catch {
        value = false
      }
      health = { at: now(), value }
      return value
    },
    sweep,
    load: () => ({ active, queued }),
    async close() {
      closed = true
      if (sweeper) clearInterval(sweeper)
      for (const timer of lateCreations) clearTimeout(timer)
      lateCreations.clear()
      const waiting = [...queues.values()].flat()
      queues.clear()
      queued = 0
      for (const entry of waiting) entry(false)
      await Promise.all([...inFlight].map((id) => deleteSession(id)))
    },
  }
}

/** The turn's final answer once the runtime completed it: its text, or that it failed. */
function finishedAnswer(
  messages: readonly Message[],
  messageID: string,
): { text: string; failed: boolean } | undefined {
  const turn = messages.filter(
    (m) => m.info.role === 'assistant' && (m.info as { parentID?: string }).parentID === messageID,
  )
  const last = turn.at(-1)
  if (!last) return undefined
  const info = last.info as { time: { completed?: number }; error?: unknown; finish?: string }
  if (info.error) return { text: '', failed: true }
  if (info.time.completed === undefined || info.finish === 'tool-calls') return undefined
  const text = last.parts
    .filter((p) => p.type === 'text' && (p as { synthetic?: boolean }).synthetic !== true)
    .map((p) => (p as { text?: string }).text ?? '')
    .join('')
  return { text, failed: false }
}

/** `provider/model` → its two parts (the model id may itself contain `/`). */
export function parseModel(value: string): { providerID: string; modelID: string } {
  const at = value.indexOf('/')
  if (at <= 0 || at === value.length - 1) throw new TypeError('moderator model must be "provider/model"')
  return { providerID: value.slice(0, at), modelID: value.slice(at + 1) }
}

function positive(name: string, value: number | undefined, fallback: number, zeroOk = false): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < (zeroOk ? 0 : 1))
    throw new RangeError(`moderator ${name} must be a positive integer`)
  return value
}
