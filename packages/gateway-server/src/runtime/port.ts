import type { TurnMessage } from '../jobs/derive-job-state.js'

// The narrow view of the agent runtime the gateway's tools use. `upstream-adapter.ts` implements
// it over `@agentgate/upstream-client`; keeping it narrow keeps the tools testable and makes
// every upstream operation the gateway can perform visible in one place.

export interface RuntimeSession {
  id: string
  title: string
  parentID?: string
  metadata?: Record<string, unknown>
  time: { created: number; updated: number }
  summary?: { additions: number; deletions: number; files: number }
}

export interface RuntimePermission {
  id: string
  sessionID: string
  permission: string
  patterns: string[]
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

export interface RuntimePort {
  createSession(input: {
    title?: string
    agent: string
    metadata: Record<string, unknown>
  }): Promise<RuntimeSession>
  getSession(id: string): Promise<RuntimeSession>
  listSessions(): Promise<RuntimeSession[]>
  setSessionMetadata(id: string, metadata: Record<string, unknown>): Promise<void>
  forkSession(id: string, messageId?: string): Promise<RuntimeSession>
  /** Aborts, rejects the session's pending asks, then deletes (no orphan asks). */
  deleteSession(id: string): Promise<void>
  /** Aborts the session's run (and subagents) and rejects its pending asks. */
  abortSession(id: string): Promise<void>
  statusOf(id: string): Promise<RuntimeStatus>
  statuses(): Promise<Map<string, RuntimeStatus>>
  /**
   * The status for a read-only view: may come from the event stream and lag by one event.
   * Never for decisions (busy checks, job state, cancel): those use `statusOf`.
   */
  viewStatusOf(id: string): Promise<RuntimeStatus>
  /** All statuses for a read-only view (see `viewStatusOf`). */
  viewStatuses(): Promise<ReadonlyMap<string, RuntimeStatus>>
  messages(id: string): Promise<TurnMessage[]>
  prompt(id: string, input: { messageId: string; agent: string; text: string }): Promise<void>
  todos(id: string): Promise<RuntimeTodo[]>
  messageDiff(id: string, messageId: string): Promise<RuntimeFileDiff[]>
  permissions(sessionId: string): Promise<RuntimePermission[]>
  questions(sessionId: string): Promise<RuntimeQuestion[]>
  replyPermission(requestId: string, reply: 'once' | 'always' | 'reject', message?: string): Promise<void>
  replyQuestion(requestId: string, answers: string[][]): Promise<void>
  rejectQuestion(requestId: string): Promise<void>
  newMessageId(): string
  /**
   * Resolves with the first non-undefined result of `check`, run once now and again whenever
   * the session changes (or on a poll while the event stream is down), or `undefined` at the
   * deadline.
   */
  waitUntil<T>(
    sessionId: string,
    check: () => Promise<T | undefined>,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<T | undefined>
  healthy(): Promise<boolean>
  /** Releases what the port holds (subscriptions); not the upstream client itself. */
  close?(): void
}
