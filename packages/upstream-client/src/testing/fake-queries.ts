import type { Message, Session } from '../schemas.ts'
import type { FakeState } from './fake-state.ts'

/**
 * `GET /session` like the runtime: `roots`, `start` (updated ≥), `search` (title substring),
 * newest update first, cut at `limit` — default **100**, so a client that does not ask for more
 * loses sessions here exactly as it would against the real runtime.
 */
export function listSessionsPage(state: FakeState, query: URLSearchParams): Session[] {
  const roots = query.get('roots') === 'true'
  const start = Number(query.get('start') ?? 0)
  const search = query.get('search')
  const limit = Number(query.get('limit') ?? 100)
  return [...state.sessions.values()]
    .filter((session) => !roots || !session.parentID)
    .filter((session) => session.time.updated >= start)
    .filter((session) => !search || session.title.includes(search))
    .sort((a, b) => b.time.updated - a.time.updated || (a.id < b.id ? 1 : -1))
    .slice(0, limit)
}

/**
 * `GET /session/{id}/message` like the runtime: all messages oldest first, or with `limit` the
 * newest `limit` (still oldest first) and a cursor for the older ones; `before` needs `limit`.
 * The cursor is the oldest returned message id (the runtime's is opaque). Undefined = 400.
 */
export function listMessagesPage(
  state: FakeState,
  sessionId: string,
  query: URLSearchParams,
): { items: Message[]; cursor?: string } | undefined {
  const all = state.messages.get(sessionId) ?? []
  const limit = query.has('limit') ? Number(query.get('limit')) : 0
  const before = query.get('before')
  if (before !== null && !limit) return undefined
  if (!Number.isInteger(limit) || limit < 0) return undefined
  if (!limit) return { items: all }
  const end = before === null ? all.length : all.findIndex((message) => message.info.id === before)
  if (end === -1) return undefined
  const items = all.slice(Math.max(0, end - limit), end)
  const first = items[0]
  return end - limit > 0 && first ? { items, cursor: first.info.id } : { items }
}
