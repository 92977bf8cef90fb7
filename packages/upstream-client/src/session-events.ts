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
  /**
   * Poll interval while the stream is not live. Default: the client's `events.pollIntervalMs`
   * (1 000 ms). The waits of one session share one poll, at the shortest interval among them.
   */
  readonly pollMs?: number
  /** Which of the session's events should re-run the check. Default: every one. */
  readonly relevant?: (event: SessionEvent) => boolean
  /**
   * An event's check waits until the events that arrived with it are dispatched, so one check
   * sees a whole burst (the runtime announces the end of a run as "answer completed", then
   * "idle", at once). For checks that read the state as it is now; not for one that must see
   * each transition (a busy and an idle in one burst would look like no run at all). Default: an
   * event's check starts at once.
   */
  readonly afterBurst?: boolean
}

/** Why {@link UpstreamEvents.waitUntil} runs its check. */
export interface CheckWake {
  /**
   * The wake sequence number ({@link UpstreamEvents.sequence}) the check must see the effect
   * of: the number when the check starts (at least that of the event that woke it; the first
   * check, a poll, a probe and a reconnect each count one). A read started while `sequence` is
   * at least this value is fresh enough (this lets many waiters of one session share one read
   * per event).
   */
  readonly sequence: number
}

/** The typed, per-session view of a client's shared event stream (`client.events`). */
export interface UpstreamEvents {
  /**
   * True while the shared stream is live: from an event of a connection until the connection
   * drops or falls silent for `events.staleAfterMs` (stalled). While false, waits poll.
   */
  readonly connected: boolean
  /**
   * Wake sequence number (never decreases): counts every event this client dispatched (all
   * sessions), and every poll, probe wake and return to live, which must be looked at like an
   * event. A read of the runtime started when `sequence` was `n` reflects every event numbered up
   * to `n`.
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
  /**
   * Delivers every event of the pinned directory, untyped (`{id?, type, properties}`), with the
   * size of its data as received (UTF-16 code units of the JSON text: about its bytes).
   */
  onEvent(handler: (event: RawEvent, size: number) => void): () => void
  /** Reports when the stream becomes live and when it stops being live; does not open it. */
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
   * the session, again when the stream becomes live again (events of the gap may be lost), at
   * most every `pollMs` while the stream is not live (one poll per session, shared by its waits),
   * and when a status probe of a silent stream finds the session's run status changed without its
   * event. Resolves with the first result that is not `undefined`, or `undefined` at the deadline.
   * Checks never overlap; an event during a check queues one more run (with `afterBurst`, once
   * the events that arrived with it are dispatched). Each run is told which wake sequence it must
   * reflect ({@link CheckWake}). Rejects if `check` throws or `signal` aborts.
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

/** What the waits of {@link createSessionEvents} need besides the stream. */
export interface SessionEventsOptions {
  /**
   * Reads the runtime's run statuses (`GET /session/status`: busy and retrying sessions) for the
   * probe of a silent stream. Absent: no probe.
   */
  readonly statuses?: () => Promise<Record<string, { type?: unknown }>>
  /** Default poll interval of waits while the stream is not live. */
  readonly pollIntervalMs: number
  /** Silence of a live stream after which waits are checked by a status probe. */
  readonly probeAfterMs: number
  /** Random source in [0, 1) for the poll jitter. */
  readonly random: () => number
}

const DEFAULTS: SessionEventsOptions = { pollIntervalMs: 1_000, probeAfterMs: 2_000, random: Math.random }

/**
 * Spacing of polls across sessions: a session's poll interval is at least this times the number
 * of OTHER sessions with waits, so all of them together poll about 10–13 times a second at most
 * (a turn read cost the runtime about 30–50 ms of CPU on a shared 2-core machine: a third to half
 * a core at most, however many sessions wait through an outage; up to 11 sessions keep 1 s).
 */
const POLL_SPACING_MS = 100

type RunStatus = 'idle' | 'busy' | 'retry'
const toRunStatus = (type: unknown): RunStatus =>
  type === 'busy' ? 'busy' : type === 'retry' ? 'retry' : 'idle'

/** One pending `waitUntil`, as its session's watch sees it. */
interface Waiter {
  readonly pollMs: number
  /** True while its check runs. */
  readonly running: boolean
  /** Runs its check (or queues one more run); resolves when its checks are over. Never rejects. */
  wake(): Promise<void>
}

/** The pending waits of one session: their shared poll and what the events said of its run. */
interface Watch {
  readonly waiters: Set<Waiter>
  poll: ReturnType<typeof setTimeout> | undefined
  /** The run status the events (or the last probe) reported; undefined before either did. */
  status: RunStatus | undefined
  /** Wake sequence number of the last status event of the session. */
  statusSequence: number
  /** When its first wait began (and ran its first check). */
  readonly createdAt: number
}

// When waits look at the runtime (issue 18, "event stream dropped or stalled"):
//
// - Live stream (events arriving, heartbeats every 10 s): on the session's events only. No poll.
// - Stream not live (dropped, refused, connecting, or silent for `staleAfterMs`: a stall): every
//   session with waits gets ONE poll, armed once none of its checks runs, at a random point in
//   [pollMs/2, pollMs] (1 s by default: a job's end is seen within a second, a small fraction
//   of any waitMs; the jitter spreads the sessions' polls, which all start when the stream
//   drops; with many sessions the interval grows: see POLL_SPACING_MS). Each poll counts as a wake (the sequence number goes up), so the reads it causes
//   start after it, and the gateway's waiters of the session share one read per poll.
// - Stream live again: every wait checks once more (a read that started after the return, since
//   the events of the gap are lost), then back to events only.
// - Live but silent for `probeAfterMs` (2 s) while waits are pending: ONE `GET /session/status`
//   for all sessions, and the waits of a session whose run status differs from what its events
//   said are woken. A stall is only KNOWN after `staleAfterMs` (the heartbeat is 10 s apart, so
//   less silence proves nothing); the probe bounds what waits miss before that (a run that ended
//   during a fresh stall) to about 2 s, at one cheap request per 2 s of silence whatever the
//   number of waits (measured on the real runtime: see the gateway's event-stream-faults e2e
//   test). A slow poll of every waited session instead would cost a full turn read (status,
//   messages, asks) per session each time. What a status cannot show (a question asked during a
//   fresh stall) waits for `staleAfterMs`.

/** Builds `client.events` over the shared stream: one stream subscription, routed by session id. */
export function createSessionEvents(
  stream: EventStream,
  options: SessionEventsOptions = DEFAULTS,
): UpstreamEvents {
  const bySession = new Map<string, Set<(event: SessionEvent) => void>>()
  const rawHandlers = new Set<(event: RawEvent, size: number) => void>()
  const connectionHandlers = new Set<(connected: boolean) => void>()
  const pendingWaits = new Set<() => void>()
  const watches = new Map<string, Watch>()
  let unsubscribeStream: (() => void) | undefined
  let closed = false
  let sequence = 0
  let lastEventAt = Date.now()
  let lastProbeAt = Number.NEGATIVE_INFINITY
  let probeTimer: ReturnType<typeof setTimeout> | undefined
  let probing = false

  const dispatch = (raw: RawEvent, size: number): void => {
    sequence++
    lastEventAt = Date.now()
    for (const handler of [...rawHandlers]) safely(() => handler(raw, size))
    const sessionId = (raw.properties as { sessionID?: unknown } | undefined)?.sessionID
    if (typeof sessionId !== 'string' || !SESSION_EVENT_TYPES.has(raw.type)) return
    const watch = watches.get(sessionId)
    if (watch && (raw.type === 'session.status' || raw.type === 'session.idle')) {
      const status = (raw.properties as { status?: { type?: unknown } }).status
      watch.status = raw.type === 'session.idle' ? 'idle' : toRunStatus(status?.type)
      watch.statusSequence = sequence
    }
    const handlers = bySession.get(sessionId)
    if (!handlers) return
    const parsed = SessionEventSchema.safeParse(raw)
    if (!parsed.success) return
    for (const handler of [...handlers]) safely(() => handler(parsed.data))
  }

  /** Wakes every wait of the session, as a new wake of the sequence. */
  const wakeAll = (watch: Watch): Promise<unknown> => {
    sequence++
    return Promise.all([...watch.waiters].map((waiter) => waiter.wake()))
  }

  /** Arms the session's next poll: only while the stream is not live and none of its checks runs. */
  const schedulePoll = (watch: Watch): void => {
    if (closed || watch.poll !== undefined || stream.connected || watch.waiters.size === 0) return
    let pollMs = Number.POSITIVE_INFINITY
    for (const waiter of watch.waiters) {
      if (waiter.running) return
      pollMs = Math.min(pollMs, waiter.pollMs)
    }
    const interval = Math.max(pollMs, (watches.size - 1) * POLL_SPACING_MS)
    watch.poll = setTimeout(
      () => {
        watch.poll = undefined
        if (!stream.connected) void wakeAll(watch)
      },
      interval / 2 + (options.random() * interval) / 2,
    )
  }

  /** When the next probe may run: after `probeAfterMs` of silence, of the last probe, and of the oldest watch's first check. */
  const probeDue = (): number => {
    let oldest = Number.POSITIVE_INFINITY
    for (const watch of watches.values()) oldest = Math.min(oldest, watch.createdAt)
    return Math.max(lastEventAt, lastProbeAt, oldest) + options.probeAfterMs
  }

  const scheduleProbe = (): void => {
    if (!options.statuses || closed || probing || probeTimer !== undefined) return
    if (!stream.connected || watches.size === 0) return
    probeTimer = setTimeout(() => void probe(), Math.max(0, probeDue() - Date.now()))
  }

  const probe = async (): Promise<void> => {
    probeTimer = undefined
    if (!options.statuses || closed || !stream.connected || watches.size === 0) return
    // Events arrived since the timer was armed: the stream is not silent, look later.
    if (Date.now() < probeDue()) return scheduleProbe()
    probing = true
    lastProbeAt = Date.now()
    const startedAt = sequence
    let statuses: Record<string, { type?: unknown }> | undefined
    try {
      statuses = await options.statuses()
    } catch {
      // Not answered: the next probe (or the stall detection) looks again.
    }
    probing = false
    if (statuses && stream.connected && !closed)
      for (const [sessionId, watch] of watches) {
        // A status event that arrived meanwhile is at least as new as this read; a wait that
        // began less than `probeAfterMs` ago has just read for itself (the next probe is its).
        if (watch.statusSequence > startedAt) continue
        if (lastProbeAt - watch.createdAt < options.probeAfterMs) continue
        const current = toRunStatus(statuses[sessionId]?.type)
        const known = watch.status
        watch.status = current
        // Unknown before: a run seen idle may have ended unseen; one seen busy is what the
        // wait's own first check saw (or it would not be waiting).
        if (known === undefined ? current === 'idle' : known !== current) void wakeAll(watch)
      }
    scheduleProbe()
  }

  // Registered first, so waits and the sequence number change before anyone else hears of it.
  stream.onConnectionChange((live) => {
    if (live) {
      // The gap's events are lost: every wait reads again, after this point.
      sequence++
      lastEventAt = Date.now()
      for (const watch of watches.values()) {
        clearTimeout(watch.poll)
        watch.poll = undefined
        for (const waiter of watch.waiters) void waiter.wake()
      }
      scheduleProbe()
    } else {
      clearTimeout(probeTimer)
      probeTimer = undefined
      for (const watch of watches.values()) schedulePoll(watch)
    }
    for (const handler of [...connectionHandlers]) safely(() => handler(live))
  })

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

  const watchOf = (sessionId: string): Watch => {
    let watch = watches.get(sessionId)
    if (!watch) {
      watch = {
        waiters: new Set(),
        poll: undefined,
        status: undefined,
        statusSequence: 0,
        createdAt: Date.now(),
      }
      watches.set(sessionId, watch)
    }
    return watch
  }

  const unwatch = (sessionId: string, watch: Watch, waiter: Waiter): void => {
    watch.waiters.delete(waiter)
    if (watch.waiters.size > 0 || watches.get(sessionId) !== watch) return
    clearTimeout(watch.poll)
    watch.poll = undefined
    watches.delete(sessionId)
    if (watches.size === 0) {
      clearTimeout(probeTimer)
      probeTimer = undefined
    }
  }

  /** Common frame of both waits: deadline, abort signal, cleanup, close(). */
  const wait = <T>(
    frame: WaitForOptions,
    body: (finish: (value: T | undefined) => void, fail: (error: unknown) => void) => () => void,
  ): Promise<T | undefined> =>
    new Promise<T | undefined>((resolve, reject) => {
      const signal = frame.signal
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
      const deadline = setTimeout(() => finish(undefined), Math.max(0, frame.timeoutMs))
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
      const entry = (event: RawEvent, size: number): void => handler(event, size)
      rawHandlers.add(entry)
      retain()
      return () => {
        if (rawHandlers.delete(entry)) release()
      }
    },
    onConnectionChange(handler) {
      const entry = (value: boolean): void => handler(value)
      connectionHandlers.add(entry)
      return () => void connectionHandlers.delete(entry)
    },
    waitFor(sessionId, predicate, waitOptions) {
      return wait<SessionEvent>(waitOptions, (finish, fail) =>
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
      waitOptions: WaitUntilOptions,
    ) {
      const pollMs = waitOptions.pollMs ?? options.pollIntervalMs
      return wait<T>(waitOptions, (finish, fail) => {
        let done = false
        let running: Promise<void> | undefined
        let again = false
        const watch = watchOf(sessionId)
        const trigger = (): Promise<void> => {
          if (done) return Promise.resolve()
          if (running) {
            again = true
            return running
          }
          running = (async () => {
            try {
              do {
                again = false
                // Every wake so far has been counted: a read started now reflects them all.
                const value = await check({ sequence })
                if (done) return
                if (value !== undefined) return finish(value)
              } while (again)
            } catch (error) {
              fail(error)
            }
          })().finally(() => {
            running = undefined
            schedulePoll(watch)
          })
          return running
        }
        const waiter: Waiter = {
          pollMs,
          get running() {
            return running !== undefined
          },
          wake: trigger,
        }
        watch.waiters.add(waiter)
        // With `afterBurst`, an event's check waits for the rest of its burst: events read from
        // the stream together are dispatched before the check looks (one check per burst, not one
        // plus a re-run; an end announced as "answer completed, then idle" is checked with the
        // idle in).
        let soon: ReturnType<typeof setImmediate> | undefined
        const offSession = onSession(sessionId, (event) => {
          if (soon !== undefined || (waitOptions.relevant && !waitOptions.relevant(event))) return
          if (!waitOptions.afterBurst) return void trigger()
          soon = setImmediate(() => {
            soon = undefined
            void trigger()
          })
        })
        void trigger()
        scheduleProbe()
        return () => {
          done = true
          clearImmediate(soon)
          offSession()
          unwatch(sessionId, watch, waiter)
        }
      })
    },
    close() {
      closed = true
      clearTimeout(probeTimer)
      probeTimer = undefined
      for (const onClose of [...pendingWaits]) onClose()
      for (const watch of watches.values()) clearTimeout(watch.poll)
      watches.clear()
      bySession.clear()
      rawHandlers.clear()
      connectionHandlers.clear()
      unsubscribeStream?.()
      unsubscribeStream = undefined
      stream.close()
    },
  }
}
