import type { HttpHandler } from 'msw'
import type {
  FileDiff,
  Message,
  PermissionRequest,
  QuestionInfo,
  QuestionRequest,
  RawEvent,
  Session,
  Todo,
} from '../schemas.ts'
import { createFakeAsks, type FakePermissionInput } from './fake-asks.ts'
import { createFakeEventHub } from './fake-event-hub.ts'
import { createFakeHandlers, type FakeRequestRecord } from './fake-handlers.ts'
import { fakeId } from './fake-ids.ts'
import { createSessionRecord, type FakeContext, type NewSessionInput } from './fake-sessions.ts'
import { createFakeState, type FakeState } from './fake-state.ts'
import { createFakeTurns, type FakeTurn } from './fake-turns.ts'

/** Options of {@link createFakeRuntime}. */
export interface FakeRuntimeOptions {
  /** Default `http://opencode.test`. */
  readonly baseUrl?: string
  /** Default `opencode`. */
  readonly username?: string
  /** Default `fake-password`. */
  readonly password?: string
  /** The only directory the fake accepts. Default `/workspace`. */
  readonly directory?: string
  /** Interval of `server.heartbeat` on `/event`. Default 10 000 ms, like the runtime. */
  readonly heartbeatMs?: number
  /** Clock for timestamps. Default `Date.now`. */
  readonly now?: () => number
  /**
   * Called (after the 204) whenever a turn starts, so a test can script the "model": call
   * `completeTurn`, `askPermission`, `failTurn`, … on the runtime it receives. Without it, turns
   * stay running until the test drives them.
   */
  readonly onTurn?: (turn: FakeTurn, runtime: FakeRuntime) => void
}

/** What {@link FakeRuntime.completeTurn} can attach to the turn besides its answer. */
export interface CompleteTurnOptions {
  /** Files the turn changed, served by `GET /session/{id}/diff?messageID=<user message id>`. */
  readonly diffs?: readonly FileDiff[]
  /** The session's new todo list (emits `todo.updated`). */
  readonly todos?: readonly Todo[]
}

/**
 * An in-memory OpenCode runtime behind msw handlers, close enough to 1.18.33 for the gateway's
 * integration tests (see the README's "Testing" section for what it models and what not).
 */
export interface FakeRuntime {
  /** Pass to msw: `setupServer(...fake.handlers)`. */
  readonly handlers: HttpHandler[]
  readonly baseUrl: string
  readonly username: string
  readonly password: string
  readonly directory: string
  /** `{ baseUrl, username, password, directory }`, ready for `createUpstreamClient`. */
  /**
   * Options for `createUpstreamClient`. Its `fetch` is the global fetch, which msw intercepts
   * whole: through the client's default (`node:http`) msw does not pass a cancelled body back to
   * the fake, so an event stream a client leaves would stay open here.
   */
  readonly clientOptions: {
    baseUrl: string
    username: string
    password: string
    directory: string
    fetch: typeof fetch
  }
  /** The live state; read it in assertions, change it through the methods below. */
  readonly state: FakeState
  /** Every request received, oldest first (no credentials, no bodies). */
  readonly requests: FakeRequestRecord[]
  /** Every event emitted on `/event` (heartbeats and `server.connected` excluded). */
  readonly events: readonly RawEvent[]
  /** `/event` connections open now, and opened in total. */
  readonly eventStreams: { readonly open: number; readonly opened: number }
  /** An absolute URL on the fake, for `server.use(http.get(fake.url('/session'), …))` overrides. */
  url(path: string): string
  /** Adds a session directly (no request), like `POST /session`. */
  addSession(input?: NewSessionInput): Session
  /**
   * Prompts a session directly (no request), like `POST /session/{id}/prompt_async`: adds the user
   * message (id `messageID`, or a fresh one) and starts or queues its turn. Returns the message id.
   */
  prompt(sessionId: string, text: string, options?: { messageID?: string; agent?: string }): string
  /** User message id of the turn running in a session, if any. */
  runningTurn(sessionId: string): string | undefined
  /** The running turn answers `text` and ends (the next queued turn starts, or the session idles). */
  completeTurn(sessionId: string, text: string, options?: CompleteTurnOptions): Message
  /** The running turn fails with a non-retryable provider error; queued turns are dropped. */
  failTurn(sessionId: string, error?: { name?: string; message?: string; statusCode?: number }): Message
  /** The running turn asks for a permission (default: `bash` on `echo hi`). */
  askPermission(sessionId: string, input?: FakePermissionInput): PermissionRequest
  /** The running turn asks questions (default: one "Which colour?" with Blue/Red). */
  askQuestion(sessionId: string, questions?: readonly QuestionInfo[]): QuestionRequest
  /** Replaces a session's todos and emits `todo.updated`. */
  setTodos(sessionId: string, todos: readonly Todo[]): void
  /** Puts a session into `retry` status (as during provider backoff) and emits `session.status`. */
  setRetry(sessionId: string, retry: { attempt: number; message: string; next: number }): void
  /** Emits any event on `/event`. */
  emit(type: string, properties: Record<string, unknown>): RawEvent
  /** Ends every open `/event` connection (the client should reconnect). */
  dropEventStreams(): void
  /** When false, `/event` answers 503 (and open streams are dropped): the client must poll. */
  setEventsAvailable(available: boolean): void
}

/**
 * Creates a fake runtime. Use with msw and `onUnhandledRequest: 'error'`.
 *
 * @example
 * const fake = createFakeRuntime({ onTurn: (turn, rt) => rt.completeTurn(turn.sessionId, 'done') })
 * const server = setupServer(...fake.handlers)
 * server.listen({ onUnhandledRequest: 'error' })
 * const client = createUpstreamClient(fake.clientOptions)
 */
export function createFakeRuntime(options: FakeRuntimeOptions = {}): FakeRuntime {
  const baseUrl = (options.baseUrl ?? 'http://opencode.test').replace(/\/+$/, '')
  const username = options.username ?? 'opencode'
  const password = options.password ?? 'fake-password'
  const directory = options.directory ?? '/workspace'
  const now = options.now ?? Date.now
  const state = createFakeState()
  const hub = createFakeEventHub(options.heartbeatMs ?? 10_000)
  const ctx: FakeContext = { state, hub, now, directory }
  const requests: FakeRequestRecord[] = []
  let eventsAvailable = true
  // Assigned below; the hook only runs after a timer, when `runtime` exists.
  let runtime: FakeRuntime | undefined
  const turns = createFakeTurns(ctx, (turn) => {
    if (runtime) options.onTurn?.(turn, runtime)
  })
  const asks = createFakeAsks(ctx, turns)
  const handlers = createFakeHandlers({
    ctx,
    hub,
    turns,
    asks,
    baseUrl,
    authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`,
    requests,
    eventsAvailable: () => eventsAvailable,
  })

  runtime = {
    handlers,
    baseUrl,
    username,
    password,
    directory,
    clientOptions: {
      baseUrl,
      username,
      password,
      directory,
      fetch: (input, init) => globalThis.fetch(input, init),
    },
    state,
    requests,
    get events() {
      return hub.history
    },
    get eventStreams() {
      return { open: hub.openCount, opened: hub.openedCount }
    },
    url: (path) => `${baseUrl}${path.startsWith('/') ? path : `/${path}`}`,
    addSession: (input) => createSessionRecord(ctx, input),
    prompt(sessionId, text, extra = {}) {
      const messageID = extra.messageID ?? fakeId('msg', now)
      turns.prompt(sessionId, {
        messageID,
        parts: [{ type: 'text', text }],
        ...(extra.agent ? { agent: extra.agent } : {}),
      })
      return messageID
    },
    runningTurn: (sessionId) => turns.running(sessionId),
    completeTurn(sessionId, text, extra = {}) {
      const userMessageId = turns.running(sessionId)
      // Kept where the runtime keeps it: the user message's summary, which its diff endpoint reads.
      const user = userMessageId && state.messages.get(sessionId)?.find((m) => m.info.id === userMessageId)
      if (user && extra.diffs) {
        const info = user.info as { summary?: Record<string, unknown> }
        info.summary = { ...info.summary, diffs: structuredClone([...extra.diffs]) }
      }
      if (extra.todos) runtime?.setTodos(sessionId, extra.todos)
      return turns.completeTurn(sessionId, text)
    },
    failTurn: (sessionId, error) => turns.failTurn(sessionId, error),
    askPermission: (sessionId, input) => asks.askPermission(sessionId, input),
    askQuestion: (sessionId, questions) => asks.askQuestion(sessionId, questions),
    setTodos(sessionId, todos) {
      state.todos.set(sessionId, structuredClone([...todos]))
      hub.emit('todo.updated', { sessionID: sessionId, todos })
    },
    setRetry(sessionId, retry) {
      const status = { type: 'retry' as const, ...retry }
      state.status.set(sessionId, status)
      hub.emit('session.status', { sessionID: sessionId, status })
    },
    emit: (type, properties) => hub.emit(type, properties),
    dropEventStreams: () => hub.dropAll(),
    setEventsAvailable(available) {
      eventsAvailable = available
      if (!available) hub.dropAll()
    },
  }
  return runtime
}
