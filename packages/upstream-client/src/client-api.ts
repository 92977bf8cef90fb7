import type {
  AgentPartInput,
  Auth,
  FilePartInput,
  SubtaskPartInput,
  TextPartInput,
} from '@opencode-ai/sdk/v2'
import type { CallOptions } from './invoke.ts'
import type {
  Agent,
  Config,
  ConfiguredProviders,
  FileDiff,
  Health,
  Message,
  PermissionRequest,
  ProviderList,
  QuestionRequest,
  Session,
  SessionListItem,
  SessionStatusMap,
  Todo,
} from './schemas.ts'
import type { UpstreamEvents } from './session-events.ts'

/** What {@link UpstreamClient.createSession} sends. */
export interface CreateSessionInput {
  readonly title?: string
  /** Agent profile of the session (e.g. `remote`). */
  readonly agent?: string
  /** Free-form object stored with the session (the gateway's ownership record). */
  readonly metadata?: Record<string, unknown>
}

/** Filters of {@link UpstreamClient.listSessions}. */
export interface ListSessionsInput {
  /** Only sessions without a parent (drops subagent sessions). Default false. */
  readonly roots?: boolean
  /** Title substring. */
  readonly search?: string
}

/** One page of {@link UpstreamClient.listSessionPage}: the runtime's own filters of `GET /session`. */
export interface ListSessionPageInput extends ListSessionsInput {
  /** At most this many sessions, the most recently updated ones (a positive integer). */
  readonly limit: number
  /** Only sessions updated at or after this time (ms). */
  readonly start?: number
}

/** Paging of {@link UpstreamClient.listMessages}. */
export interface ListMessagesInput {
  /** The newest `limit` messages (still returned oldest first). Omit for all. */
  readonly limit?: number
  /** Cursor from a previous page's `nextCursor` (needs `limit`). */
  readonly before?: string
}

/** One page of messages, oldest first. */
export interface MessagePage {
  readonly messages: Message[]
  /** Pass as `before` to get the older page; absent on the oldest page or without `limit`. */
  readonly nextCursor?: string
}

/** A part of a prompt: text (with optional client `metadata`, returned unchanged), file, agent, subtask. */
export type PromptPartInput = TextPartInput | FilePartInput | AgentPartInput | SubtaskPartInput

/** What {@link UpstreamClient.promptAsync} sends. */
export interface PromptAsyncInput {
  /** The user message id; mint it with `newMessageId()`. Every assistant message of the turn gets it as `parentID`. */
  readonly messageID: string
  readonly agent?: string
  readonly parts: readonly PromptPartInput[]
  readonly model?: { readonly providerID: string; readonly modelID: string }
  /** A system prompt for this turn, added to the agent's own. */
  readonly system?: string
}

/** Answer to a permission ask: `always` approves its patterns for the whole project until restart. */
export type PermissionReply = 'once' | 'always' | 'reject'

/** Provider credential stored by the runtime (`PUT /auth/{providerID}`). */
export type ProviderAuth = Auth

/** What {@link UpstreamClient.settleSession} did. */
export interface SettleResult {
  /** The session and its descendants (subagent sessions), all aborted. */
  readonly sessions: string[]
  /** Permission asks rejected (ids). */
  readonly permissions: string[]
  /** Questions rejected (ids). */
  readonly questions: string[]
}

/**
 * The typed client of the operations the gateway needs. Every call is pinned to the configured
 * directory, sends the Basic credential, has a timeout, validates the answer and fails with one
 * {@link UpstreamError}; every method takes {@link CallOptions} as its last argument.
 */
export interface UpstreamClient {
  /** `POST /session` (session.create). */
  createSession(input?: CreateSessionInput, options?: CallOptions): Promise<Session>
  /**
   * Every session of the pinned directory, newest update first (`GET /session`). The runtime has
   * no cursor and cuts at `limit` (default 100), so this asks for 1 000 and, while a page comes
   * back full, asks again with ten times the limit: nothing is lost, and one request suffices
   * below 1 000 sessions. Stops growing at 1 000 000.
   */
  listSessions(input?: ListSessionsInput, options?: CallOptions): Promise<Session[]>
  /**
   * ONE `GET /session` page: the `limit` most recently updated sessions (updated ≥ `start` when
   * given), newest update first as the runtime sorts them (ties in no defined order), each
   * validated with the lean {@link SessionListItemSchema}. For listers that stop early.
   * @throws RangeError when `limit` is not a positive integer.
   */
  listSessionPage(input: ListSessionPageInput, options?: CallOptions): Promise<SessionListItem[]>
  /**
   * `GET /session/{id}/children` (session.children): the sessions created with this one as their
   * parent (subagents; forks are not children). 404 → `ERR_UPSTREAM_NOT_FOUND`.
   */
  listChildren(sessionId: string, options?: CallOptions): Promise<Session[]>
  /** `GET /session/{id}` (session.get); 404 → `ERR_UPSTREAM_NOT_FOUND`. */
  getSession(sessionId: string, options?: CallOptions): Promise<Session>
  /** `PATCH /session/{id}` with `{metadata}`. The runtime REPLACES the whole metadata object. */
  updateSessionMetadata(
    sessionId: string,
    metadata: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<Session>
  /**
   * Deletes a session without leaving an orphan ask: {@link UpstreamClient.settleSession} first
   * (abort, reject its pending permissions and questions), then `DELETE /session/{id}`, which
   * cascades to child sessions. NOTES §5: a bare delete of a session waiting on a permission
   * leaves the ask pending and the session `busy` in the status map.
   */
  deleteSession(sessionId: string, options?: CallOptions): Promise<SettleResult>
  /** `POST /session/{id}/fork`: copies messages before `messageID` (all if omitted) AND the metadata. */
  forkSession(
    sessionId: string,
    input?: { readonly messageID?: string },
    options?: CallOptions,
  ): Promise<Session>
  /** `POST /session/{id}/abort`; true also for idle sessions. */
  abortSession(sessionId: string, options?: CallOptions): Promise<boolean>
  /**
   * Aborts the session and its descendants, then rejects every pending permission and question
   * of them (ignoring ones answered meanwhile). Use before deleting, or to stop a job for good.
   */
  settleSession(sessionId: string, options?: CallOptions): Promise<SettleResult>
  /** `GET /session/status`: busy and retrying sessions; idle ones are absent. */
  sessionStatus(options?: CallOptions): Promise<SessionStatusMap>
  /** `GET /session/{id}/message`, oldest first. */
  listMessages(sessionId: string, input?: ListMessagesInput, options?: CallOptions): Promise<MessagePage>
  /** `GET /session/{id}/message/{messageID}`. */
  getMessage(sessionId: string, messageId: string, options?: CallOptions): Promise<Message>
  /** `POST /session/{id}/prompt_async`: starts (or queues) a turn and returns at once (204). */
  promptAsync(sessionId: string, input: PromptAsyncInput, options?: CallOptions): Promise<void>
  /** `GET /session/{id}/todo`. */
  todos(sessionId: string, options?: CallOptions): Promise<Todo[]>
  /** `GET /session/{id}/diff?messageID=`: files changed by one turn (the session-wide form returns []). */
  messageDiff(sessionId: string, messageId: string, options?: CallOptions): Promise<FileDiff[]>
  /** `GET /permission`: pending asks, optionally only those of `sessionId`. */
  listPermissions(sessionId?: string, options?: CallOptions): Promise<PermissionRequest[]>
  /** `POST /permission/{id}/reply`; 404 (`ERR_UPSTREAM_NOT_FOUND`) if no longer pending. */
  replyPermission(
    requestId: string,
    reply: PermissionReply,
    message?: string,
    options?: CallOptions,
  ): Promise<boolean>
  /** `GET /question`: pending questions, optionally only those of `sessionId`. */
  listQuestions(sessionId?: string, options?: CallOptions): Promise<QuestionRequest[]>
  /** `POST /question/{id}/reply`: one array of chosen labels per question. */
  replyQuestion(
    requestId: string,
    answers: readonly (readonly string[])[],
    options?: CallOptions,
  ): Promise<boolean>
  /** `POST /question/{id}/reject`: the tool fails with "dismissed" and the turn ends. */
  rejectQuestion(requestId: string, options?: CallOptions): Promise<boolean>
  /** `GET /global/config`: only the global config file. */
  getGlobalConfig(options?: CallOptions): Promise<Config>
  /** `PATCH /global/config`: writes the global config file; returns the new document. */
  patchGlobalConfig(patch: Config, options?: CallOptions): Promise<Config>
  /** `GET /config`: the merged config of the directory. It CONTAINS provider API keys: never log or forward it. */
  getConfig(options?: CallOptions): Promise<Config>
  /** `PUT /auth/{providerID}`. */
  setAuth(providerId: string, auth: ProviderAuth, options?: CallOptions): Promise<boolean>
  /** `DELETE /auth/{providerID}`. */
  removeAuth(providerId: string, options?: CallOptions): Promise<boolean>
  /** `GET /provider`: the whole catalog (megabytes); see `configuredProviders` for the usable ones. */
  listProviders(options?: CallOptions): Promise<ProviderList>
  /** `GET /config/providers`: the providers the runtime can use and their default models. */
  configuredProviders(options?: CallOptions): Promise<ConfiguredProviders>
  /** `GET /agent`. */
  listAgents(options?: CallOptions): Promise<Agent[]>
  /** `GET /global/health`. */
  health(options?: CallOptions): Promise<Health>
  /** A fresh native message id from this client's clock (see `newMessageId`). */
  newMessageId(): string
  /** The shared event stream, typed per session. */
  readonly events: UpstreamEvents
  /** The pinned workspace directory. */
  readonly directory: string
  /**
   * Closes the event stream, settles pending waits and closes the default fetch's idle
   * connections. Requests in flight are not affected.
   */
  close(): void
}
