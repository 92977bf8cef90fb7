import type { OpencodeClient } from '@opencode-ai/sdk/v2'
import { z } from 'zod'
import type { UpstreamClient } from './client-api.ts'
import type { Invoke } from './invoke.ts'
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

/**
 * The session, message and prompt operations over the SDK. None of them passes a `directory`:
 * the transport pins it on every request.
 */
export function createSessionOperations(sdk: OpencodeClient, invoke: Invoke): SessionOperations {
  const session = sdk.session
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

    listChildren: (sessionId, options) =>
      invoke(
        'session.children',
        z.array(SessionSchema),
        (call) => session.children({ sessionID: sessionId }, call),
        options,
      ),

    getSession: (sessionId, options) =>
      invoke('session.get', SessionSchema, (call) => session.get({ sessionID: sessionId }, call), options),

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
      invoke('session.status', SessionStatusMapSchema, (call) => session.status(undefined, call), options),

    async listMessages(sessionId, input = {}, options) {
      let nextCursor: string | null | undefined
      const messages = await invoke(
        'session.messages',
        z.array(MessageSchema),
        async (call) => {
          const result = await session.messages(
            { sessionID: sessionId, limit: input.limit, before: input.before },
            call,
          )
          nextCursor = result.response?.headers.get('x-next-cursor')
          return result
        },
        options,
      )
      return nextCursor ? { messages, nextCursor } : { messages }
    },

    getMessage: (sessionId, messageId, options) =>
      invoke(
        'session.message',
        MessageSchema,
        (call) => session.message({ sessionID: sessionId, messageID: messageId }, call),
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

    todos: (sessionId, options) =>
      invoke(
        'session.todo',
        z.array(TodoSchema),
        (call) => session.todo({ sessionID: sessionId }, call),
        options,
      ),

    messageDiff: (sessionId, messageId, options) =>
      invoke(
        'session.diff',
        z.array(FileDiffSchema),
        (call) => session.diff({ sessionID: sessionId, messageID: messageId }, call),
        options,
      ),
  }
}
