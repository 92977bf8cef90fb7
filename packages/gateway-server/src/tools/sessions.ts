import { GatewayError } from '../errors.js'
import { newestRun } from '../jobs/derive-job-state.js'
import { retryState } from '../jobs/job-status.js'
import { READ_ONLY_HINTS, type ToolDefinition } from '../mcp/define-tool.js'
import type { Redactor } from '../redact.js'
import type { RuntimePort, RuntimeSession, RuntimeStatus } from '../runtime/port.js'
import {
  SESSION_PAGE_DEFAULT,
  SESSION_PAGE_MAX,
  SessionDelete,
  SessionDeleteInput,
  SessionFork,
  SessionForkInput,
  SessionGet,
  SessionGetInput,
  SessionList,
  SessionListInput,
} from '../schemas.js'
import type { OwnedSessions } from '../sessions/owned.js'
import { newestOwned, type SessionPageSource } from '../sessions/owned-page.js'
import { messageViews, sessionDiff, sessionSummary, todoViews } from '../sessions/views.js'

export interface SessionToolContext {
  runtime: RuntimePort
  owned: OwnedSessions
  /** Rewrites every string relayed from the runtime (no host path, no upstream id). */
  redactor: Redactor
}

/** Cursor of `gateway.session.list`: an offset into the owned, newest-first list. Reveals nothing upstream. */
export function encodeCursor(offset: number): string {
  return `c1.${offset.toString(36)}`
}
export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0
  const match = /^c1\.([0-9a-z]{1,8})$/.exec(cursor)
  const offset = match?.[1] ? Number.parseInt(match[1], 36) : Number.NaN
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new GatewayError('invalid_input', 'That cursor is not valid.')
  return offset
}

/**
 * Sessions listed that count as one more operation against the caller's rate (a listing of
 * 4 000 sessions took the runtime 170-290 ms, an ordinary read a few milliseconds): such a listing
 * counts 21 operations, so a credential of the default rate (10/s, burst 300) lists them at most
 * about 14 times at once and then once every 2 s, about a tenth of the runtime's time.
 */
export const SESSIONS_PER_OPERATION = 200

/**
 * How long a caller whose listing needed every session lists every session at once, without the
 * probe first (a round trip that would not suffice again: its sessions are spread among others').
 * After that it probes again, so a caller whose newest sessions became enough is served by the
 * probe at most this long after.
 */
const SKIP_PROBE_MS = 60_000
/** Callers remembered (least recently listed go first). */
const MAX_HINTS = 4_096
const hintsByRuntime = new WeakMap<RuntimePort, Map<string, number>>()
/** Per runtime: credential identity → until when its listings skip the probe. */
function fullListingHints(runtime: RuntimePort): Map<string, number> {
  let hints = hintsByRuntime.get(runtime)
  if (!hints) {
    hints = new Map()
    hintsByRuntime.set(runtime, hints)
  }
  return hints
}

/** The runtime's listings, counting the sessions they return. */
function countingSource(runtime: RuntimePort): { source: SessionPageSource; read: () => number } {
  let read = 0
  const counted = (list: RuntimeSession[]): RuntimeSession[] => {
    read += list.length
    return list
  }
  const listPage = runtime.listSessionPage?.bind(runtime)
  return {
    source: {
      listSessions: async () => counted(await runtime.listSessions()),
      ...(listPage && { listSessionPage: async (page) => counted(await listPage(page)) }),
    },
    read: () => read,
  }
}

export function sessionListTool(
  ctx: SessionToolContext,
): ToolDefinition<typeof SessionListInput, typeof SessionList> {
  return {
    title: 'List your sessions',
    description: `List the sessions this credential created, newest first (limit 1-${SESSION_PAGE_MAX}, default ${SESSION_PAGE_DEFAULT}; pass nextCursor for more).`,
    input: SessionListInput,
    output: SessionList,
    hints: READ_ONLY_HINTS,
    run: async ({ limit = SESSION_PAGE_DEFAULT, cursor }, _signal, call) => {
      const offset = decodeCursor(cursor)
      // Only as many of the newest sessions as this page needs (and one more, to know whether a
      // next page exists) are read and verified; see sessions/owned-page.ts.
      const counted = countingSource(ctx.runtime)
      const hints = fullListingHints(ctx.runtime)
      const key = ctx.owned.identity
      const skipProbe = (hints.get(key) ?? 0) > Date.now()
      const [mine, statuses] = await Promise.all([
        newestOwned(counted.source, (s) => ctx.owned.isOwned(s), offset + limit, {
          probe: !skipProbe,
          onFullListing: () => {
            hints.delete(key)
            hints.set(key, Date.now() + SKIP_PROBE_MS)
            if (hints.size > MAX_HINTS) hints.delete(hints.keys().next().value as string)
          },
        }),
        ctx.runtime.viewStatuses(),
      ])
      // A caller whose sessions are few among many makes the runtime list them all, every call:
      // that costs the runtime like many operations, and counts so against the caller's rate.
      call.charge(Math.floor(counted.read() / SESSIONS_PER_OPERATION))
      const page = mine.sessions.slice(offset, offset + limit)
      const summaries = await Promise.all(
        page.map((s) => sessionSummary(ctx.owned, ctx.redactor, s, statuses.get(s.id) ?? 'idle')),
      )
      const next = mine.more ? encodeCursor(offset + limit) : undefined
      return { sessions: summaries, ...(next !== undefined && { nextCursor: next }) }
    },
  }
}

export function sessionGetTool(
  ctx: SessionToolContext,
): ToolDefinition<typeof SessionGetInput, typeof SessionGet> {
  return {
    title: 'Get a session',
    description:
      "Get one of your sessions, with optional views: include any of messages, diff, todos. While the session runs a job, activeJob is that job's handle (for gateway.job.get or gateway.job.cancel).",
    input: SessionGetInput,
    output: SessionGet,
    hints: READ_ONLY_HINTS,
    run: async ({ session: handle, include = [] }) => {
      const id = await ctx.owned.sessionIdOf(handle)
      const views = new Set(include)
      const needMessages = views.has('messages') || views.has('diff')
      // The reads start together with the ownership check (one round trip instead of two);
      // nothing read is used unless `loadOwned` succeeds.
      const reads = Promise.all([
        ctx.runtime.viewStatusOf(id),
        needMessages ? ctx.runtime.messages(id) : undefined,
        views.has('todos') ? ctx.runtime.todos(id) : undefined,
      ])
      reads.catch(() => undefined)
      const session = await ctx.owned.loadOwned(id)
      const [status, messages, todos] = await reads
      const { owned, redactor, runtime } = ctx
      // The running job's handle, so a client that lost it (it left before agent.run answered)
      // can follow or cancel the run: the session's newest run while the session is busy.
      let activeJob: string | undefined
      // Retrying a failed model request: its details (one more status read, only then).
      const retry =
        status === 'retry' && runtime.statusDetailOf
          ? retryState(redactor, (await runtime.statusDetailOf(id)).retry)
          : undefined
      if (status !== 'idle') {
        const all = messages ?? (await runtime.messages(id))
        const runId = newestRun(all)
        const run = all.find((m) => m.info.id === runId)
        if (runId && run) activeJob = await owned.sealJob(session.id, runId, run.info.time.created)
      }
      return {
        session: await sessionSummary(owned, redactor, session, status),
        ...(activeJob !== undefined && { activeJob }),
        ...(retry && { retry }),
        ...(views.has('messages') &&
          messages && { messages: await messageViews(owned, redactor, session.id, messages) }),
        ...(views.has('diff') &&
          messages && { diff: await sessionDiff(runtime, redactor, session.id, messages) }),
        ...(todos && { todos: todoViews(redactor, todos) }),
      }
    },
  }
}

export function sessionForkTool(
  ctx: SessionToolContext,
): ToolDefinition<typeof SessionForkInput, typeof SessionFork> {
  return {
    title: 'Fork a session',
    description:
      'Copy one of your sessions into a new session, optionally only the messages before a given message handle.',
    input: SessionForkInput,
    output: SessionFork,
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async ({ session: handle, message }) => {
      const session = await ctx.owned.openSession(handle)
      const messageId = message === undefined ? undefined : await ctx.owned.openMessage(message, session.id)
      const fork = await ctx.runtime.forkSession(session.id, messageId)
      // The fork carries a copy of the parent's record, which is bound to the parent's id and so
      // fails verification: write a fresh record for the new session.
      const metadata = await ctx.owned.ownershipMetadata(fork.id)
      try {
        await ctx.runtime.setSessionMetadata(fork.id, metadata)
      } catch (error) {
        // Never leave behind a fork nobody owns (it would still carry the parent's copied record).
        await ctx.runtime.deleteSession(fork.id).catch(() => undefined)
        throw error
      }
      return {
        session: await sessionSummary(
          ctx.owned,
          ctx.redactor,
          { ...fork, metadata },
          'idle' as RuntimeStatus,
        ),
      }
    },
  }
}

export function sessionDeleteTool(
  ctx: SessionToolContext,
): ToolDefinition<typeof SessionDeleteInput, typeof SessionDelete> {
  return {
    title: 'Delete a session',
    description:
      'Delete one of your sessions for good (a running job is aborted and pending questions are rejected first).',
    input: SessionDeleteInput,
    output: SessionDelete,
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    run: async ({ session: handle }) => {
      const session = await ctx.owned.openSession(handle)
      await ctx.runtime.deleteSession(session.id)
      return { deleted: true as const }
    },
  }
}
