import type { OpencodeClient } from '@opencode-ai/sdk/v2'
import { z } from 'zod'
import type { UpstreamClient } from './client-api.ts'
import type { Invoke } from './invoke.ts'
import { BooleanResultSchema, PermissionRequestSchema, QuestionRequestSchema } from './schemas.ts'

type InteractionOperations = Pick<
  UpstreamClient,
  'listPermissions' | 'replyPermission' | 'listQuestions' | 'replyQuestion' | 'rejectQuestion'
>

/**
 * Pending permission asks and questions. The runtime lists them for every session of the
 * directory; the optional `sessionId` filter is applied here.
 */
export function createInteractionOperations(sdk: OpencodeClient, invoke: Invoke): InteractionOperations {
  return {
    async listPermissions(sessionId, options) {
      const all = await invoke(
        'permission.list',
        z.array(PermissionRequestSchema),
        (call) => sdk.permission.list(undefined, call),
        options,
      )
      return sessionId === undefined ? all : all.filter((request) => request.sessionID === sessionId)
    },

    replyPermission: (requestId, reply, message, options) =>
      invoke(
        'permission.reply',
        BooleanResultSchema,
        (call) => sdk.permission.reply({ requestID: requestId, reply, message }, call),
        options,
      ),

    async listQuestions(sessionId, options) {
      const all = await invoke(
        'question.list',
        z.array(QuestionRequestSchema),
        (call) => sdk.question.list(undefined, call),
        options,
      )
      return sessionId === undefined ? all : all.filter((request) => request.sessionID === sessionId)
    },

    replyQuestion: (requestId, answers, options) =>
      invoke(
        'question.reply',
        BooleanResultSchema,
        (call) =>
          sdk.question.reply({ requestID: requestId, answers: answers.map((labels) => [...labels]) }, call),
        options,
      ),

    rejectQuestion: (requestId, options) =>
      invoke(
        'question.reject',
        BooleanResultSchema,
        (call) => sdk.question.reject({ requestID: requestId }, call),
        options,
      ),
  }
}
