import type { Message, Session } from '../schemas.ts'
import type { FakeEventHub } from './fake-event-hub.ts'
import { fakeId } from './fake-ids.ts'
import { FAKE_RUNTIME_VERSION, type FakeState } from './fake-state.ts'

/** What the fake's session bookkeeping needs. */
export interface FakeContext {
  readonly state: FakeState
  readonly hub: FakeEventHub
  readonly now: () => number
  readonly directory: string
}

/** Input of {@link createSessionRecord}: the fields `POST /session` accepts, plus `parentID`. */
export interface NewSessionInput {
  readonly title?: string
  readonly agent?: string
  readonly metadata?: Record<string, unknown>
  readonly parentID?: string
}

/** Creates a session like the runtime (default title `New session - <ISO>`), emits `session.created`. */
export function createSessionRecord(ctx: FakeContext, input: NewSessionInput = {}): Session {
  const now = ctx.now()
  const session: Session = {
    id: fakeId('ses', ctx.now),
    slug: `fake-${ctx.state.sessions.size + 1}`,
    projectID: 'global',
    directory: ctx.directory,
    path: ctx.directory.replace(/^\//, ''),
    title: input.title ?? `New session - ${new Date(now).toISOString()}`,
    version: FAKE_RUNTIME_VERSION,
    cost: 0,
    tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
    time: { created: now, updated: now },
    ...(input.parentID ? { parentID: input.parentID } : {}),
    ...(input.agent ? { agent: input.agent } : {}),
    ...(input.metadata ? { metadata: input.metadata } : {}),
  }
  ctx.state.sessions.set(session.id, session)
  ctx.state.messages.set(session.id, [])
  ctx.hub.emit('session.created', { sessionID: session.id, info: session })
  return session
}

/** Applies a change to a session, bumps `time.updated` and emits `session.updated`. */
export function touchSession(
  ctx: FakeContext,
  sessionId: string,
  change: Partial<Session> = {},
): Session | undefined {
  const current = ctx.state.sessions.get(sessionId)
  if (!current) return undefined
  const next: Session = {
    ...current,
    ...change,
    time: { ...current.time, ...change.time, updated: ctx.now() },
  }
  ctx.state.sessions.set(sessionId, next)
  ctx.hub.emit('session.updated', { sessionID: sessionId, info: next })
  return next
}

/**
 * Deletes a session and its descendants like the runtime, orphan included (NOTES §5): a session
 * with a pending permission or question keeps the ask listed and stays `busy` in the status map.
 */
export function deleteSessionRecord(ctx: FakeContext, sessionId: string): boolean {
  const root = ctx.state.sessions.get(sessionId)
  if (!root) return false
  const doomed = [root]
  for (let i = 0; i < doomed.length; i++) {
    const parent = doomed[i]
    for (const session of ctx.state.sessions.values())
      if (parent && session.parentID === parent.id) doomed.push(session)
  }
  for (const session of doomed) {
    ctx.state.sessions.delete(session.id)
    ctx.state.messages.delete(session.id)
    ctx.state.todos.delete(session.id)
    const orphan =
      [...ctx.state.permissions.values()].some((ask) => ask.sessionID === session.id) ||
      [...ctx.state.questions.values()].some((ask) => ask.sessionID === session.id)
    if (!orphan) {
      ctx.state.status.delete(session.id)
      ctx.state.turns.delete(session.id)
    }
    ctx.hub.emit('session.deleted', { sessionID: session.id, info: session })
  }
  return true
}

/**
 * Forks like the runtime: messages strictly before `messageID` (all if omitted) are copied with
 * new ids (and `parentID`s remapped), the title becomes `<title> (fork #N)`, metadata is copied,
 * and the fork has no `parentID`.
 */
export function forkSessionRecord(
  ctx: FakeContext,
  sessionId: string,
  messageID?: string,
): Session | undefined {
  const source = ctx.state.sessions.get(sessionId)
  if (!source) return undefined
  const count = (ctx.state.forkCounts.get(sessionId) ?? 0) + 1
  ctx.state.forkCounts.set(sessionId, count)
  const fork = createSessionRecord(ctx, {
    title: `${source.title} (fork #${count})`,
    ...(source.agent ? { agent: source.agent } : {}),
    ...(source.metadata ? { metadata: structuredClone(source.metadata) } : {}),
  })
  const all = ctx.state.messages.get(sessionId) ?? []
  const cut = messageID === undefined ? all.length : all.findIndex((message) => message.info.id === messageID)
  const ids = new Map<string, string>()
  const copies: Message[] = []
  for (const message of all.slice(0, cut === -1 ? all.length : cut)) {
    const id = fakeId('msg', ctx.now)
    ids.set(message.info.id, id)
    const info = { ...structuredClone(message.info), id, sessionID: fork.id }
    if (info.role === 'assistant') info.parentID = ids.get(info.parentID) ?? info.parentID
    const parts = message.parts.map((part) => ({
      ...structuredClone(part),
      id: fakeId('prt', ctx.now),
      sessionID: fork.id,
      messageID: id,
    }))
    copies.push({ info, parts } as Message)
  }
  ctx.state.messages.set(fork.id, copies)
  return fork
}
