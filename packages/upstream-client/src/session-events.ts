import type { UpstreamError } from './errors.ts'
import type { EventStream } from './event-stream.ts'
import { safely } from './safely.ts'
import { type RawEvent, type SessionEvent, SessionEventSchema, type SessionEventType } from './schemas.ts'

/** Options of {@link UpstreamEvents.waitFor}. */
export interface WaitForOptions {
  /** Give up after this long and resolve `undefined`. */
  readonly timeoutMs: number
  /** Rejects the wait with the signal's reason. */
  readonly signal?: AbortSignal
}

/** Options of {@link UpstreamEvents.waitUntil}. */
export interface WaitUntilOptions extends WaitForOptions {
  /** Poll interval while the stream is down. Default 1 000 ms. */
  readonly pollMs?: number
  /** Which of the session's events should re-run the check. Default: every one. */
  readonly relevant?: (event: SessionEvent) => boolean
}

/** Why {@link UpstreamEvents.waitUntil} runs its check. */
export interface CheckWake {
  /**
   * The event sequence number ({@link UpstreamEvents.sequence}) the check must see the effect
   * of: the number of the event that woke it, or the current number for the first check, a
   * poll or a reconnect. A read started while `sequence` is at least this value is fresh enough
   * (this lets many waiters of one session share one read per event).
   */
  readonly sequence: number
}

/** The typed, per-session view of a client's shared event stream (`client.events`). */
export interface UpstreamEvents {
  /** True while the shared stream is connected (from its first event until it drops). */
  readonly connected: boolean
  /**
   * How many events this client has dispatched so far (all sessions; never decreases). A read
   * of the runtime started when `sequence` was `n` reflects every event numbered up to `n`.
   */
  readonly sequence: number
  /** Why the stream last failed or ended, if it did (already redacted). */
  readonly lastError: UpstreamError | undefined
  /**
   * Delivers the typed events of one session ({@link SessionEvent}) to `handler`. Opens the shared
   * stream if needed; returns the unsubscribe function (the last one out closes the stream).
   * Events that fail validation are dropped, never thrown.
   */
  onSession(sessionId: string, handler: (event: SessionEvent) => void): () => void
  /** Delivers every event of the pinned directory, untyped (`{id?, type, properties}`). */
  onEvent(handler: (event: RawEvent) => void): () => void
  /** Reports connects and disconnects of the stream; does not open it. */
  onConnectionChange(handler: (connected: boolean) => void): () => void
  /**
   * Resolves with the first event of `sessionId` that matches `predicate`, or `undefined` after
   * `timeoutMs`. Only sees events that arrive after the call: to wait for a state, use
   * {@link UpstreamEvents.waitUntil}, which also works while the stream is down.
   */
  waitFor(
    sessionId: string,
    predicate: (event: SessionEvent) => boolean,
    options: WaitForOptions,
  ): Promise<SessionEvent | undefined>
  /**
   * Waits for a state of `sessionId`: runs `check` once at once, again on each (relevant) event of
   * the session, again when the stream (re)connects (events may have been missed), and every
   * `pollMs` while the stream is down. Resolves with the first result that is not `undefined`, or
   * `undefined` at the deadline. Checks never overlap; an event during a check queues one more run.
   * Each run is told which event sequence it must reflect ({@link CheckWake}).
   * Rejects if `check` throws or `signal` aborts.
   */
  waitUntil<T>(
    sessionId: string,
    check: (wake: CheckWake) => Promise<T | undefined>,
    options: WaitUntilOptions,
  ): Promise<T | undefined>
  /** Closes the stream and settles every pending wait with `undefined`. */
  close(): void
}

const SESSION_EVENT_TYPES: ReadonlySet<string> = new Set<SessionEventType>([
  'session.status',
  'session.idle',
  'session.error',
  'session.updated',
  'session.deleted',
  'message.updated',
  'message.part.updated',
  'permission.asked',
  'permission.replied',
  'question.asked',
  'question.replied',
  'question.rejected',
  'todo.updated',
])

/** Builds `client.events` over the shared stream: one stream subscription, routed by session id. */
export function createSessionEvents(stream: EventStream): UpstreamEvents {
  const bySession = new Map<string, Set<(event: SessionEvent) => void>>()
  const rawHandlers = new Set<(event: RawEvent) => void>()
  const pendingWaits = new Set<() => void>()
  let unsubscribeStream: (() => void) | undefined
  let closed = false
  let sequence = 0

  const dispatch = (raw: RawEvent): void => {
    sequence++
    for (const handler of [...rawHandlers]) safely(() => handler(raw))
    const sessionId = (raw.properties as { sessionID?: unknown } | undefined)?.sessionID
    if (typeof sessionId !== 'string' || !SESSION_EVENT_TYPES.has(raw.type)) return
    const handlers = bySession.get(sessionId)
    if (!handlers) return
    const parsed = SessionEventSchema.safeParse(raw)
    if (!parsed.success) return
    for (const handler of [...handlers]) safely(() => handler(parsed.data))
  }

  const retain = (): void => {
    if (!unsubscribeStream && !closed) unsubscribeStream = stream.subscribe(dispatch)
  }
  const release = (): void => {
    if (bySession.size > 0 || rawHandlers.size > 0) return
    unsubscribeStream?.()
    unsubscribeStream = undefined
  }

  const onSession = (sessionId: string, handler: (event: SessionEvent) => void): (() => void) => {
    if (closed) return () => undefined
    const entry = (event: SessionEvent): void => handler(event)
    const handlers = bySession.get(sessionId) ?? new Set()
    bySession.set(sessionId, handlers)
    handlers.add(entry)
    retain()
    return () => {
      const set = bySession.get(sessionId)
      if (!set?.delete(entry)) return
      if (set.size === 0) bySession.delete(sessionId)
      release()
    }
  }

  /** Common frame of both waits: deadline, abort signal, cleanup, close(). */
  const wait = <T>(
    options: WaitForOptions,
    body: (finish: (value: T | undefined) => void, fail: (error: unknown) => void) => () => void,
  ): Promise<T | undefined> =>
    new Promise<T | undefined>((resolve, reject) => {
      const signal = options.signal
      if (signal?.aborted) return reject(signal.reason)
      if (closed) return resolve(undefined)
      let settled = false
      let cleanupBody: () => void = () => undefined
      const settle = (action: () => void): void => {
        if (settled) return
        settled = true
        clearTimeout(deadline)
        signal?.removeEventListener('abort', onAbort)
        pendingWaits.delete(onClose)
        cleanupBody()
        action()
      }
      const finish = (value: T | undefined): void => settle(() => resolve(value))
      const fail = (error: unknown): void => settle(() => reject(error))
      const onAbort = (): void => fail(signal?.reason)
      const onClose = (): void => finish(undefined)
      const deadline = setTimeout(() => finish(undefined), Math.max(0, options.timeoutMs))
      signal?.addEventListener('abort', onAbort, { once: true })
      pendingWaits.add(onClose)
      const cleanup = body(finish, fail)
      if (settled) cleanup()
      else cleanupBody = cleanup
    })

  return {
    get connected() {
      return stream.connected
    },
    get lastError() {
      return stream.lastError
    },
    get sequence() {
      return sequence
    },
    onSession,
    onEvent(handler) {
      if (closed) return () => undefined
      const entry = (event: RawEvent): void => handler(event)
      rawHandlers.add(entry)
      retain()
      return () => {
        if (rawHandlers.delete(entry)) release()
      }
    },
    onConnectionChange: (handler) => stream.onConnectionChange(handler),
    waitFor(sessionId, predicate, options) {
      return wait<SessionEvent>(options, (finish, fail) =>
        onSession(sessionId, (event) => {
          try {
            if (predicate(event)) finish(event)
          } catch (error) {
            fail(error)
          }
        }),
      )
    },
    waitUntil<T>(
      sessionId: string,
      check: (wake: CheckWake) => Promise<T | undefined>,
      options: WaitUntilOptions,
    ) {
      const pollMs = options.pollMs ?? 1_000
      return wait<T>(options, (finish, fail) => {
        let done = false
        let running = false
        let again = false
        let pollTimer: ReturnType<typeof setTimeout> | undefined
        const schedulePoll = (): void => {
          clearTimeout(pollTimer)
          pollTimer = undefined
          if (!done && !running && !stream.connected) pollTimer = setTimeout(trigger, pollMs)
        }
        const trigger = (): void => {
          if (done) return
          if (running) {
            again = true
            return
          }
          running = true
          void (async () => {
            try {
              do {
                again = false
                // Every event so far has been dispatched: a read started now reflects them all.
                const value = await check({ sequence })
                if (done) return
                if (value !== undefined) return finish(value)
              } while (again)
            } catch (error) {
              fail(error)
            } finally {
              running = false
              schedulePoll()
            }
          })()
        }
        const offSession = onSession(sessionId, (event) => {
          if (!options.relevant || options.relevant(event)) trigger()
        })
        // A (re)connect may follow a gap in which events were lost: look again at once.
        const offConnection = stream.onConnectionChange((isConnected) => {
          if (isConnected) trigger()
          else schedulePoll()
        })
        trigger()
        return () => {
          done = true
          clearTimeout(pollTimer)
          offSession()
          offConnection()
        }
      })
    },
    close() {
      closed = true
      for (const onClose of [...pendingWaits]) onClose()
      bySession.clear()
      rawHandlers.clear()
      unsubscribeStream?.()
      unsubscribeStream = undefined
      stream.close()
    },
  }
}
