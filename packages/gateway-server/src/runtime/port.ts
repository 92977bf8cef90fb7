// The narrow view of the agent runtime the gateway's tools use. `upstream-adapter.ts` implements
// it over `@sallyport/upstream-client`; keeping it narrow keeps the tools testable and makes
// every upstream operation the gateway can perform visible in one place.

export interface RuntimeSession {
  id: string
  title: string
  parentID?: string
  metadata?: Record<string, unknown>
  time: { created: number; updated: number }
  summary?: { additions: number; deletions: number; files: number }
}

/**
 * A message of a session as the port gives it: the fields the gateway reads (job state, views,
 * usage), structurally a subset of the runtime's own message, so the adapter passes the upstream
 * client's validated messages through unchanged.
 */
export interface RuntimeMessage {
  info: {
    id: string
    role: string
    parentID?: string
    time: { created: number; completed?: number }
    error?: { name: string; data?: { message?: unknown } }
    finish?: string
    /** A user message's summary (the runtime's record of its turn's changed files: `turnDiff`). */
    summary?: unknown
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
    time?: unknown
  }>
}

export interface RuntimePermission {
  id: string
  sessionID: string
  permission: string
  patterns: string[]
  /** The patterns an `always` answer approves (the runtime's own; wider than `patterns`). */
  always?: string[]
}

export interface RuntimeQuestion {
  id: string
  sessionID: string
  questions: Array<{
    header: string
    question: string
    options: Array<{ label: string; description: string }>
    multiple?: boolean
    custom?: boolean
  }>
}

export interface RuntimeFileDiff {
  path: string
  status?: string
  additions: number
  deletions: number
  patch?: string
}

export interface RuntimeTodo {
  content: string
  status: string
  priority?: string
}

export type RuntimeStatus = 'idle' | 'busy' | 'retry'

/**
 * The runtime retrying a failed model request (status `retry`): which attempt failed, the
 * provider's message as the runtime passes it on (unsanitized: may quote keys or host paths),
 * and when it tries again (epoch ms).
 */
export interface RuntimeRetry {
  readonly attempt: number
  readonly message: string
  readonly next: number
}

/** A session's status with the retry's details when it is `retry`. */
export interface RuntimeStatusDetail {
  readonly status: RuntimeStatus
  readonly retry?: RuntimeRetry
}

/**
 * What a reply to a pending ask came to: `absent` when the runtime no longer knows the ask (it
 * was answered or dismissed meanwhile, or its session is gone). Not an error: the caller decides.
 */
export type ReplyOutcome = 'replied' | 'absent'

/** One runtime event as `onActivity` reports it: no content, only whose it is and its size. */
export interface RuntimeActivity {
  readonly sessionId: string
  /** Set on a session's creation when it is a child (a subagent's session) of another. */
  readonly parentId?: string
  /** The size of the event's data as received (about its bytes). */
  readonly size: number
  /** The event starts a step of a run: one more request to the model, with the whole history. */
  readonly step?: true
}

/** Why a `waitUntil` check runs: the event sequence number its reads must reflect. */
export interface RuntimeWake {
  /** See `RuntimePort.eventSequence`; a read started at or after this number is fresh enough. */
  sequence: number
}

export interface RuntimePort {
  createSession(input: {
    title?: string
    agent: string
    metadata: Record<string, unknown>
  }): Promise<RuntimeSession>
  /** The session, or `undefined` when the runtime does not know it (gone, or never existed). */
  getSession(id: string): Promise<RuntimeSession | undefined>
  /** Every root session (no subagent sessions), newest update first. */
  listSessions(): Promise<RuntimeSession[]>
  /**
   * ONE page of root sessions as the runtime sorts them: the `limit` most recently updated
   * (updated ≥ `start` when given), newest first, ties in no defined order. For listings that stop
   * early (`sessions/owned-page.ts`); absent: those read `listSessions`.
   */
  listSessionPage?(page: { limit: number; start?: number }): Promise<RuntimeSession[]>
  setSessionMetadata(id: string, metadata: Record<string, unknown>): Promise<void>
  forkSession(id: string, messageId?: string): Promise<RuntimeSession>
  /** Aborts, rejects the session's pending asks, then deletes (no orphan asks). */
  deleteSession(id: string): Promise<void>
  /** Aborts the session's run (and subagents) and rejects its pending asks. */
  abortSession(id: string): Promise<void>
  /**
   * Aborts the session's run and nothing else (no listing, no asks): the cheap repeat a cancel
   * sends while the run still shows up live. Absent: `abortSession` is used.
   */
  abortRun?(id: string): Promise<void>
  statusOf(id: string): Promise<RuntimeStatus>
  /** `statusOf` with the retry's details (absent: reads use `statusOf` and report no details). */
  statusDetailOf?(id: string): Promise<RuntimeStatusDetail>
  statuses(): Promise<Map<string, RuntimeStatus>>
  /**
   * The status for a read-only view: may come from the event stream and lag by one event.
   * Never for decisions (busy checks, job state, cancel): those use `statusOf`.
   */
  viewStatusOf(id: string): Promise<RuntimeStatus>
  /** All statuses for a read-only view (see `viewStatusOf`). */
  viewStatuses(): Promise<ReadonlyMap<string, RuntimeStatus>>
  /**
   * The status as the runtime's event stream last announced it, with no read; `undefined` while
   * the stream is not in sync (down, stalled, reloading). It lags the runtime by the events in
   * flight, so it is as good as a status read made when the last event arrived: `turn-reads.ts`
   * uses an `idle` from it in place of a status read, its message read starting after. Absent:
   * every read asks the runtime.
   */
  eventStatusOf?(id: string): RuntimeStatus | undefined
  /**
   * The session's messages, oldest first. With `from` (a user message id): at least every message
   * from that one on — the runtime is read newest first, a page at a time, until it is in hand
   * (all of them when it is not found). A job's state needs no older message; a long session is
   * then not read whole at every look at its newest run. A port may ignore `from` and read all.
   */
  messages(id: string, options?: { from?: string }): Promise<RuntimeMessage[]>
  prompt(id: string, input: { messageId: string; agent: string; text: string }): Promise<void>
  todos(id: string): Promise<RuntimeTodo[]>
  /**
   * The session's todos as the runtime's event stream left them, with no read; `undefined` when
   * the port does not know them (stream not live, session not seen created or updated since it
   * went live: see `todo-view.ts`). Complete up to the last event received, so it is as good as a
   * todo read made then: `turn-reads.ts` uses it beside an `idle` from `eventStatusOf`. Absent:
   * every read asks the runtime.
   */
  eventTodosOf?(id: string): RuntimeTodo[] | undefined
  messageDiff(id: string, messageId: string): Promise<RuntimeFileDiff[]>
  /**
   * What `messageDiff` would answer, taken from messages already read (the runtime answers it
   * from them), or `undefined` when they do not hold it in a shape the port knows: then read it.
   * Absent: always read.
   */
  turnDiff?(messages: readonly RuntimeMessage[], messageId: string): RuntimeFileDiff[] | undefined
  permissions(sessionId: string): Promise<RuntimePermission[]>
  questions(sessionId: string): Promise<RuntimeQuestion[]>
  replyPermission(
    requestId: string,
    reply: 'once' | 'always' | 'reject',
    message?: string,
  ): Promise<ReplyOutcome>
  replyQuestion(requestId: string, answers: string[][]): Promise<ReplyOutcome>
  rejectQuestion(requestId: string): Promise<ReplyOutcome>
  newMessageId(): string
  /**
   * How many runtime events the port has seen so far (monotonic). A read started when this was
   * `n` reflects every event up to `n`; waiters woken by event `n` may share any read started at
   * or after `n` (see `jobs/turn-reads.ts`). Absent: no sharing between waiters.
   */
  eventSequence?(): number
  /**
   * Calls `handler` with every runtime event that names a session (its id, for a session created
   * under another the parent's id, and the event's size), as it arrives; returns the unsubscribe
   * function.
   * Used to count what runs cost the runtime (`jobs/run-events.ts`). Absent: not counted.
   */
  onActivity?(handler: (activity: RuntimeActivity) => void): () => void
  /**
   * Resolves with the first non-undefined result of `check`, run once now and again whenever
   * the session changes (or on a poll while the event stream is down), or `undefined` at the
   * deadline. `wake` (when the port counts events) names the event the run must reflect.
   * `afterBurst`: an event's check waits until the events that arrived with it are in (one check
   * sees the runtime's "answer completed, then idle" whole); only for checks that read the state
   * as it is, never for one that must see each transition.
   */
  waitUntil<T>(
    sessionId: string,
    check: (wake?: RuntimeWake) => Promise<T | undefined>,
    options: { timeoutMs: number; signal?: AbortSignal; afterBurst?: boolean },
  ): Promise<T | undefined>
  healthy(): Promise<boolean>
  /** Releases what the port holds (subscriptions); not the upstream client itself. */
  close?(): void
}
