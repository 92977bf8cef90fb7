import {
  type FileDiff,
  type SessionEvent,
  turnDiffOf,
  type UpstreamClient,
  UpstreamError,
} from '@sallyport/upstream-client'
import type {
  ReplyOutcome,
  RuntimeFileDiff,
  RuntimeMessage,
  RuntimePort,
  RuntimeSession,
  RuntimeStatus,
  RuntimeStatusDetail,
} from './port.js'
import { createReadSharing } from './share-next.js'
import { createStatusView } from './status-view.js'
import { createTodoView } from './todo-view.js'

// Events after which a job's state may have changed. Streaming part updates are left out on
// purpose: they arrive per token and would re-run the status check for nothing.
/** Messages of the first page of a job's read (a turn of a few steps and the ones before it). */
const FIRST_TURN_PAGE = 16
/** Largest page of a job's read, going back through a long turn. */
const MAX_TURN_PAGE = 256

const JOB_EVENTS: ReadonlySet<SessionEvent['type']> = new Set([
  'session.status',
  'session.idle',
  'session.error',
  'session.deleted',
  'message.updated',
  'permission.asked',
  'permission.replied',
  'question.asked',
  'question.replied',
  'question.rejected',
])

/**
 * The session an event of the runtime belongs to: `properties.sessionID`, else the session of the
 * part or message it carries, else (a `session.*` event) the session it describes.
 */
function sessionOfEvent(event: { type: string; properties?: unknown }): string | undefined {
  const props = event.properties as
    | {
        sessionID?: unknown
        part?: { sessionID?: unknown }
        info?: { id?: unknown; sessionID?: unknown }
      }
    | undefined
  const id =
    props?.sessionID ??
    props?.part?.sessionID ??
    props?.info?.sessionID ??
    (event.type.startsWith('session.') ? props?.info?.id : undefined)
  return typeof id === 'string' ? id : undefined
}

function toSession(s: {
  id: string
  title: string
  parentID?: string | undefined
  metadata?: Record<string, unknown> | undefined
  time: { created: number; updated: number }
  summary?: { additions: number; deletions: number; files: number } | undefined
}): RuntimeSession {
  return {
    id: s.id,
    title: s.title,
    time: { created: s.time.created, updated: s.time.updated },
    ...(s.parentID !== undefined && { parentID: s.parentID }),
    ...(s.metadata !== undefined && { metadata: s.metadata }),
    ...(s.summary !== undefined && {
      summary: { additions: s.summary.additions, deletions: s.summary.deletions, files: s.summary.files },
    }),
  }
}

/** True for the runtime's 404: the one failure the port reports as a result, not an error. */
const isNotFound = (error: unknown): boolean =>
  UpstreamError.isInstance(error) && error.code === 'ERR_UPSTREAM_NOT_FOUND'

/** Runs a reply to a pending ask; the runtime's 404 (the ask is no longer pending) is `absent`. */
async function reply(call: () => Promise<unknown>): Promise<ReplyOutcome> {
  try {
    await call()
    return 'replied'
  } catch (error) {
    if (isNotFound(error)) return 'absent'
    throw error
  }
}

const toFileDiff = (d: FileDiff): RuntimeFileDiff => ({
  // The OpenAPI document names the field `path`; older notes say `file`: accept either.
  path: typeof d.path === 'string' ? d.path : (d.file ?? ''),
  additions: d.additions,
  deletions: d.deletions,
  ...(d.status !== undefined && { status: d.status }),
  ...(typeof d.patch === 'string' && { patch: d.patch }),
})

/** How long `/health` waits for the runtime's own health answer before calling it unavailable. */
export const HEALTH_TIMEOUT_MS = 1_500

const statusType = (type: string | undefined): RuntimeStatus =>
  type === 'busy' ? 'busy' : type === 'retry' ? 'retry' : 'idle'

/** The gateway's `RuntimePort` over `@sallyport/upstream-client` (directory pinned by the client). */
export function runtimeFromUpstream(client: UpstreamClient): RuntimePort {
  const view = createStatusView(client)
  const todoView = createTodoView(client)
  // Listings from the newest session are shared among callers (`share-next.ts`): however many
  // credentials list at once, the runtime reads at most one such listing per size at a time, and
  // every caller still gets one that started after it called. The sessions are shared read-only.
  const listing = createReadSharing(
    async (limit: number | 'all'): Promise<RuntimeSession[]> =>
      (limit === 'all'
        ? await client.listSessions({ roots: true })
        : await client.listSessionPage({ roots: true, limit })
      ).map(toSession),
  )
  const statusOf = async (id: string): Promise<RuntimeStatus> =>
    statusType((await client.sessionStatus())[id]?.type)
  const statusDetailOf = async (id: string): Promise<RuntimeStatusDetail> => {
    const status = (await client.sessionStatus())[id]
    if (status?.type !== 'retry') return { status: statusType(status?.type) }
    return { status: 'retry', retry: { attempt: status.attempt, message: status.message, next: status.next } }
  }
  const statuses = async (): Promise<Map<string, RuntimeStatus>> => {
    const map = await client.sessionStatus()
    return new Map(Object.entries(map).map(([id, status]) => [id, statusType(status.type)]))
  }
  // While the view is out of sync (the stream is not live: dropped, stalled, reconnecting), views
  // read the runtime instead; those reads are shared like listings (each caller still gets one
  // that started after it called): every running job's watch looks at each poll (`run-watch.ts`),
  // and N of them cost one status read at a time instead of N. Read-only: the map is shared.
  const viewFallback = createReadSharing((_: 'all') => statuses())
  return {
    createSession: async (input) => toSession(await client.createSession(input)),
    getSession: async (id) => {
      try {
        return toSession(await client.getSession(id))
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
    },
    // Subagent sessions (with a parent) are never created by the gateway, so never owned.
    listSessions: () => listing('all'),
    // Pages from the newest (no `start`) are shared per limit: a full page costs the runtime as
    // much as a full listing. Pages since a time are small and caller-specific: read as asked.
    listSessionPage: ({ limit, start }) =>
      start === undefined
        ? listing(limit)
        : client.listSessionPage({ roots: true, limit, start }).then((page) => page.map(toSession)),
    setSessionMetadata: async (id, metadata) => {
      await client.updateSessionMetadata(id, metadata)
    },
    forkSession: async (id, messageId) =>
      toSession(await client.forkSession(id, messageId === undefined ? {} : { messageID: messageId })),
    deleteSession: async (id) => {
      await client.deleteSession(id)
    },
    abortSession: async (id) => {
      await client.settleSession(id)
    },
    abortRun: async (id) => {
      await client.abortSession(id)
    },
    statusOf,
    statusDetailOf,
    statuses,
    viewStatusOf: async (id) => view.get(id) ?? (await viewFallback('all')).get(id) ?? 'idle',
    viewStatuses: async () => view.all() ?? viewFallback('all'),
    eventStatusOf: (id) => view.get(id),
    eventTodosOf: (id) => todoView.get(id),
    close: () => {
      view.close()
      todoView.close()
    },
    messages: async (id, options) => {
      const from = options?.from
      if (from === undefined) return (await client.listMessages(id)).messages
      // Newest first, a page at a time, until the user message is in hand; older pages never
      // change under the cursor, and the turn's own messages are all newer than its user message.
      const pages: RuntimeMessage[][] = []
      let before: string | undefined
      for (let limit = FIRST_TURN_PAGE; ; limit = Math.min(limit * 4, MAX_TURN_PAGE)) {
        const page = await client.listMessages(id, { limit, ...(before !== undefined && { before }) })
        pages.unshift(page.messages)
        if (
          page.nextCursor === undefined ||
          page.messages.some((m) => m.info.id === from && m.info.role === 'user')
        )
          return pages.flat()
        // A cursor that does not move back (an empty page, the same cursor again): read it all.
        if (page.messages.length === 0 || page.nextCursor === before)
          return (await client.listMessages(id)).messages
        before = page.nextCursor
      }
    },
    prompt: async (id, { messageId, agent, text }) => {
      await client.promptAsync(id, { messageID: messageId, agent, parts: [{ type: 'text', text }] })
    },
    todos: (id) => client.todos(id),
    messageDiff: async (id, messageId) => (await client.messageDiff(id, messageId)).map(toFileDiff),
    turnDiff: (messages, messageId) => {
      const user = messages.find((m) => m.info.id === messageId)
      return user && turnDiffOf(user.info)?.map(toFileDiff)
    },
    permissions: async (sessionId) =>
      (await client.listPermissions(sessionId)).map((p) => ({
        id: p.id,
        sessionID: p.sessionID,
        permission: p.permission,
        patterns: [...p.patterns],
        ...(p.always !== undefined && { always: [...p.always] }),
      })),
    questions: async (sessionId) =>
      (await client.listQuestions(sessionId)).map((q) => ({
        id: q.id,
        sessionID: q.sessionID,
        questions: q.questions.map((item) => ({
          header: item.header,
          question: item.question,
          options: item.options.map((o) => ({ label: o.label, description: o.description })),
          ...(item.multiple !== undefined && { multiple: item.multiple }),
          ...(item.custom !== undefined && { custom: item.custom }),
        })),
      })),
    replyPermission: (requestId, decision, message) =>
      reply(() => client.replyPermission(requestId, decision, message)),
    replyQuestion: (requestId, answers) => reply(() => client.replyQuestion(requestId, answers)),
    rejectQuestion: (requestId) => reply(() => client.rejectQuestion(requestId)),
    newMessageId: () => client.newMessageId(),
    eventSequence: () => client.events.sequence,
    onActivity: (handler) =>
      client.events.onEvent((event, size) => {
        const sessionId = sessionOfEvent(event)
        if (sessionId === undefined) return
        const props = event.properties as
          | { info?: { parentID?: unknown }; part?: { type?: unknown } }
          | undefined
        const parentId = event.type === 'session.created' ? props?.info?.parentID : undefined
        const step = event.type === 'message.part.updated' && props?.part?.type === 'step-start'
        handler({
          sessionId,
          size,
          ...(typeof parentId === 'string' && { parentId }),
          ...(step && { step: true as const }),
        })
      }),
    waitUntil: (sessionId, check, options) =>
      client.events.waitUntil(sessionId, check, {
        timeoutMs: options.timeoutMs,
        ...(options.signal && { signal: options.signal }),
        ...(options.afterBurst && { afterBurst: true }),
        relevant: (event) => JOB_EVENTS.has(event.type),
      }),
    healthy: async () => {
      try {
        // One try, bounded (as the moderator's probe): `/health` waits for this and must answer
        // promptly while the runtime hangs — unbounded, a GET that gets no answer is sent twice
        // at the client's 10 s timeout, far past `sallyport health`'s 3 s and a container's check.
        const bound = { timeoutMs: HEALTH_TIMEOUT_MS, signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) }
        return (await client.health(bound)).healthy
      } catch {
        return false
      }
    },
  }
}
