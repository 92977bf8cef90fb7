import { redactSecrets } from '@sallyport/upstream-client'
import { messageText, type TurnMessage } from '../jobs/derive-job-state.js'
import type { Redactor } from '../redact.js'
import type {
  RuntimeFileDiff,
  RuntimePort,
  RuntimeSession,
  RuntimeStatus,
  RuntimeTodo,
} from '../runtime/port.js'
import type { MessageView, SessionSummary } from '../schemas.js'
import type { OwnedSessions } from './owned.js'

// The client's views of runtime records. Every string copied from the runtime goes through the
// gateway's redactor (`redact.ts`): no host path, no upstream id.

/** Newest messages returned by a session view; older ones are left out. */
export const MESSAGE_VIEW_LIMIT = 200
/** Longest relayed error message (cut after redaction). */
export const ERROR_MESSAGE_LIMIT = 500
/** User turns whose file diffs are merged into the session diff view. */
export const DIFF_TURN_LIMIT = 50
const PATCH_LIMIT = 32 * 1024

const iso = (ms: number): string => new Date(ms).toISOString()

/** The client's view of a session: handles only, never an upstream id. */
export async function sessionSummary(
  owned: OwnedSessions,
  redactor: Redactor,
  session: RuntimeSession,
  status: RuntimeStatus,
): Promise<SessionSummary> {
  return {
    session: await owned.sealSession(session.id),
    // The runtime may title a session after its first message, paths and ids included.
    title: redactor.text(session.title),
    createdAt: iso(session.time.created),
    updatedAt: iso(session.time.updated),
    status,
    ...(session.parentID !== undefined && { parent: await owned.sealSession(session.parentID) }),
    ...(session.summary !== undefined && {
      summary: {
        additions: session.summary.additions,
        deletions: session.summary.deletions,
        files: session.summary.files,
      },
    }),
  }
}

export async function messageViews(
  owned: OwnedSessions,
  redactor: Redactor,
  sessionId: string,
  messages: readonly TurnMessage[],
): Promise<MessageView[]> {
  const recent = messages.slice(-MESSAGE_VIEW_LIMIT)
  return Promise.all(
    recent.map(async (m) => {
      const tools = m.parts
        .filter((p) => p.type === 'tool' && typeof p.tool === 'string')
        .map((p) => {
          const state = (p.state ?? {}) as { status?: unknown; title?: unknown }
          return {
            tool: redactor.text(p.tool as string),
            status: typeof state.status === 'string' ? state.status : 'unknown',
            ...(typeof state.title === 'string' && { title: redactor.text(state.title) }),
          }
        })
      const error = m.info.error
      return {
        message: await owned.sealMessage(sessionId, m.info.id),
        role: m.info.role === 'user' ? ('user' as const) : ('assistant' as const),
        createdAt: iso(m.info.time.created),
        ...(m.info.time.completed !== undefined && { completedAt: iso(m.info.time.completed) }),
        text: redactor.text(messageText(m)),
        ...(tools.length > 0 && { tools }),
        ...(error && {
          error: {
            name: redactor.text(error.name),
            // A provider's message may quote a key: secrets by shape go before the cut.
            message: redactor.excerpt(
              redactSecrets(typeof error.data?.message === 'string' ? error.data.message : error.name),
              ERROR_MESSAGE_LIMIT,
            ),
          },
        }),
      }
    }),
  )
}

/**
 * The session's file changes. The runtime's whole-session diff is empty, so the per-turn diffs
 * of the newest user messages are merged by path (later turns win the status and patch).
 */
export async function sessionDiff(
  runtime: RuntimePort,
  redactor: Redactor,
  sessionId: string,
  messages: readonly TurnMessage[],
): Promise<Array<{ file: string; status?: string; additions: number; deletions: number; patch?: string }>> {
  const turns = messages.filter((m) => m.info.role === 'user').slice(-DIFF_TURN_LIMIT)
  // Each turn's diff from the messages in hand when the port can take it from them (the runtime
  // answers its diff endpoint from these same records), else read: up to DIFF_TURN_LIMIT requests saved.
  const diffs = await Promise.all(
    turns.map((m) => runtime.turnDiff?.(messages, m.info.id) ?? runtime.messageDiff(sessionId, m.info.id)),
  )
  const byPath = new Map<string, RuntimeFileDiff>()
  for (const diff of diffs.flat()) {
    const prev = byPath.get(diff.path)
    byPath.set(diff.path, {
      ...diff,
      additions: (prev?.additions ?? 0) + diff.additions,
      deletions: (prev?.deletions ?? 0) + diff.deletions,
    })
  }
  // A patch quotes file names and content: an absolute path or an id in a changed line is
  // rewritten like any other relayed text (the workspace tools read the file itself).
  return [...byPath.values()].map((d) => ({
    ...changedFile(redactor, d),
    ...(d.patch !== undefined && d.patch.length <= PATCH_LIMIT && { patch: redactor.text(d.patch) }),
  }))
}

/** One changed file of a diff (without its patch). */
export function changedFile(
  redactor: Redactor,
  diff: RuntimeFileDiff,
): { file: string; status?: string; additions: number; deletions: number } {
  return {
    file: redactor.text(diff.path),
    ...(diff.status !== undefined && { status: diff.status }),
    additions: diff.additions,
    deletions: diff.deletions,
  }
}

/** The session's todo list: the three fields of the design, nothing else the runtime adds. */
export function todoViews(
  redactor: Redactor,
  todos: readonly RuntimeTodo[],
): Array<{ content: string; status: string; priority?: string }> {
  return todos.map((t) => ({
    content: redactor.text(t.content),
    status: t.status,
    ...(t.priority !== undefined && { priority: t.priority }),
  }))
}
