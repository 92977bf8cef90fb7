import type { OpencodeClient } from '@opencode-ai/sdk/v2'
import { z } from 'zod'
import type { UpstreamClient } from './client-api.ts'
import type { Invoke, InvokeGet } from './invoke.ts'
import {
  BooleanResultSchema,
  FileDiffSchema,
  MessageSchema,
  SessionListItemSchema,
  SessionSchema,
  SessionStatusMapSchema,
  TodoSchema,
} from './schemas.ts'

/** The first `GET /session` limit of {@link UpstreamClient.listSessions}, and its growth factor. */
const FIRST_SESSION_PAGE = 1_000
const SESSION_PAGE_GROWTH = 10
const MAX_SESSION_PAGE = 1_000_000

type SessionOperations = Pick<
  UpstreamClient,
  | 'createSession'
  | 'listSessions'
  | 'listSessionPage'
  | 'listChildren'
  | 'getSession'
  | 'updateSessionMetadata'
  | 'forkSession'
  | 'abortSession'
  | 'sessionStatus'
  | 'listMessages'
  | 'getMessage'
  | 'promptAsync'
  | 'todos'
  | 'messageDiff'
>

/** A session's path, its id encoded as the SDK encodes path parameters. */
const sessionPath = (sessionId: string, rest = ''): string =>
  `/session/${encodeURIComponent(sessionId)}${rest}`

/**
 * The session, message and prompt operations: the writes over the SDK, the reads as plain GETs
 * read whole (`invokeGet`: the same routes, errors and validation, at about half the CPU). None
 * of them passes a `directory`: the transport pins it on every request.
 */
export function createSessionOperations(
  sdk: OpencodeClient,
  invoke: Invoke,
  invokeGet: InvokeGet,
): SessionOperations {
  const session = sdk.session
  const read = async <S extends z.ZodType>(
    operation: string,
    schema: S,
    path: string,
    query: Parameters<InvokeGet>[3],
    options: Parameters<InvokeGet>[4],
  ): Promise<z.output<S>> => (await invokeGet(operation, schema, path, query, options)).data
  return {
    createSession: (input = {}, options) =>
      invoke(
        'session.create',
        SessionSchema,
        (call) => session.create({ title: input.title, agent: input.agent, metadata: input.metadata }, call),
        options,
      ),

    async listSessions(input = {}, options) {
      // No cursor on this route: grow the limit until a page comes back short (see the doc).
      for (let limit = FIRST_SESSION_PAGE; ; limit *= SESSION_PAGE_GROWTH) {
        const page = await invoke(
          'session.list',
          z.array(SessionSchema),
          (call) =>
            session.list({ roots: input.roots ? true : undefined, search: input.search, limit }, call),
          options,
        )
        if (page.length < limit || limit >= MAX_SESSION_PAGE) return page
      }
    },

    async listSessionPage(input, options) {
      const { limit, start } = input
      if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer')
      if (start !== undefined && !Number.isFinite(start))
        throw new RangeError('start must be a finite number')
      return invoke(
        'session.list',
        z.array(SessionListItemSchema),
        (call) =>
          session.list({ roots: input.roots ? true : undefined, search: input.search, start, limit }, call),
        options,
      )
    },

    listChildren: async (sessionId, options) =>
      read('session.children', z.array(SessionSchema), sessionPath(sessionId, '/children'), {}, options),

    getSession: async (sessionId, options) =>
      read('session.get', SessionSchema, sessionPath(sessionId), {}, options),

    updateSessionMetadata: (sessionId, metadata, options) =>
      invoke(
        'session.update',
        SessionSchema,
        (call) => session.update({ sessionID: sessionId, metadata }, call),
        options,
      ),

    forkSession: (sessionId, input = {}, options) =>
      invoke(
        'session.fork',
        SessionSchema,
        (call) => session.fork({ sessionID: sessionId, messageID: input.messageID }, call),
        options,
      ),

    abortSession: (sessionId, options) =>
      invoke(
        'session.abort',
        BooleanResultSchema,
        (call) => session.abort({ sessionID: sessionId }, call),
        options,
      ),

    sessionStatus: (options) =>
      read('session.status', SessionStatusMapSchema, '/session/status', {}, options),

    async listMessages(sessionId, input = {}, options) {
      const { data: messages, headers } = await invokeGet(
        'session.messages',
        z.array(MessageSchema),
        sessionPath(sessionId, '/message'),
        { limit: input.limit, before: input.before },
        options,
      )
      const cursor = headers['x-next-cursor']
      const nextCursor = Array.isArray(cursor) ? cursor[0] : cursor
      return nextCursor ? { messages, nextCursor } : { messages }
    },

    getMessage: async (sessionId, messageId, options) =>
      read(
        'session.message',
        MessageSchema,
        sessionPath(sessionId, `/message/${encodeURIComponent(messageId)}`),
        {},
        options,
      ),

    async promptAsync(sessionId, input, options) {
      await invoke(
        'session.prompt_async',
        z.unknown(),
        (call) =>
          session.promptAsync(
            {
              sessionID: sessionId,
              messageID: input.messageID,
              agent: input.agent,
              model: input.model,
              ...(input.system !== undefined && { system: input.system }),
              parts: [...input.parts],
            },
            call,
          ),
        options,
      )
    },

    todos: async (sessionId, options) =>
      read('session.todo', z.array(TodoSchema), sessionPath(sessionId, '/todo'), {}, options),

    messageDiff: async (sessionId, messageId, options) =>
      read(
        'session.diff',
        z.array(FileDiffSchema),
        sessionPath(sessionId, '/diff'),
        { messageID: messageId },
        options,
      ),
  }
}
