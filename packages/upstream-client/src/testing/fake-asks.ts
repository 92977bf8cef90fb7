import type { PermissionRequest, QuestionInfo, QuestionRequest } from '../schemas.ts'
import { fakeId } from './fake-ids.ts'
import type { FakeContext } from './fake-sessions.ts'
import type { FakeTurns } from './fake-turns.ts'

/** What {@link FakeAsks.askPermission} takes; defaults model a `bash` call. */
export interface FakePermissionInput {
  readonly permission?: string
  readonly patterns?: readonly string[]
  readonly metadata?: Record<string, unknown>
  readonly always?: readonly string[]
}

/** The default question of {@link FakeAsks.askQuestion}. */
export const DEFAULT_FAKE_QUESTION: QuestionInfo = {
  question: 'Which colour?',
  header: 'Colour',
  options: [
    { label: 'Blue', description: 'The sky' },
    { label: 'Red', description: 'The fire' },
  ],
}

/** Pending permission asks and questions of the fake, with the runtime's reply semantics. */
export function createFakeAsks(ctx: FakeContext, turns: FakeTurns) {
  const { state, hub } = ctx

  /** An ask whose session was deleted: answering it clears the orphan `busy` status too. */
  const clearOrphan = (sessionId: string): void => {
    if (state.sessions.has(sessionId)) return
    const left =
      [...state.permissions.values()].some((ask) => ask.sessionID === sessionId) ||
      [...state.questions.values()].some((ask) => ask.sessionID === sessionId)
    if (left) return
    state.status.delete(sessionId)
    state.turns.delete(sessionId)
  }

  return {
    /** The running turn calls a tool that needs permission: `permission.asked`; the session stays busy. */
    askPermission(sessionId: string, input: FakePermissionInput = {}): PermissionRequest {
      const patterns = [...(input.patterns ?? ['echo hi'])]
      const permission = input.permission ?? 'bash'
      const command = patterns[0] ?? ''
      const { message, part } = turns.openTool(sessionId, permission, { command })
      const ask: PermissionRequest = {
        id: fakeId('per', ctx.now),
        sessionID: sessionId,
        permission,
        patterns,
        metadata: input.metadata ?? { command },
        always: [...(input.always ?? [`${command.split(' ')[0] ?? '*'} *`])],
        tool: { messageID: message.info.id, callID: part.callID },
      }
      state.permissions.set(ask.id, ask)
      hub.emit('permission.asked', ask)
      return ask
    },

    /**
     * Replies like the runtime (NOTES §5): `once`/`always` → the tool completes and the turn goes on;
     * `reject` with a message → the tool fails with that feedback and the turn goes on; `reject`
     * without one → the tool fails and the turn ends (`finish: "tool-calls"`). False if not pending.
     */
    replyPermission(requestId: string, reply: 'once' | 'always' | 'reject', message?: string): boolean {
      const ask = state.permissions.get(requestId)
      if (!ask) return false
      state.permissions.delete(requestId)
      hub.emit('permission.replied', { sessionID: ask.sessionID, requestID: requestId, reply })
      if (reply === 'always') state.alwaysApproved.push(...(ask.always ?? []))
      const callID = ask.tool?.callID
      if (callID && state.sessions.has(ask.sessionID)) {
        if (reply !== 'reject') turns.settleTool(ask.sessionID, callID, { output: '' })
        else if (message)
          turns.settleTool(ask.sessionID, callID, {
            error: `The user rejected permission to use this specific tool call with the following feedback: ${message}`,
            endTurn: false,
          })
        else
          turns.settleTool(ask.sessionID, callID, {
            error: 'The user rejected permission to use this specific tool call.',
            endTurn: true,
          })
      }
      clearOrphan(ask.sessionID)
      return true
    },

    /** The running turn calls the question tool: `question.asked`; the session stays busy. */
    askQuestion(
      sessionId: string,
      questions: readonly QuestionInfo[] = [DEFAULT_FAKE_QUESTION],
    ): QuestionRequest {
      const { message, part } = turns.openTool(sessionId, 'question', { questions })
      const request: QuestionRequest = {
        id: fakeId('que', ctx.now),
        sessionID: sessionId,
        questions: structuredClone([...questions]),
        tool: { messageID: message.info.id, callID: part.callID },
      }
      state.questions.set(request.id, request)
      hub.emit('question.asked', request)
      return request
    },

    /** Answers: the tool output lists the answers and the turn goes on. False if not pending. */
    replyQuestion(requestId: string, answers: readonly (readonly string[])[]): boolean {
      const request = state.questions.get(requestId)
      if (!request) return false
      state.questions.delete(requestId)
      hub.emit('question.replied', { sessionID: request.sessionID, requestID: requestId, answers })
      const pairs = request.questions.map((q, i) => `"${q.question}"="${(answers[i] ?? []).join(', ')}"`)
      if (request.tool && state.sessions.has(request.sessionID))
        turns.settleTool(request.sessionID, request.tool.callID, {
          output: `User has answered your questions: ${pairs.join(', ')}`,
        })
      clearOrphan(request.sessionID)
      return true
    },

    /** Dismisses: the tool fails with "The user dismissed this question" and the turn ends. */
    rejectQuestion(requestId: string): boolean {
      const request = state.questions.get(requestId)
      if (!request) return false
      state.questions.delete(requestId)
      hub.emit('question.rejected', { sessionID: request.sessionID, requestID: requestId })
      if (request.tool && state.sessions.has(request.sessionID))
        turns.settleTool(request.sessionID, request.tool.callID, {
          error: 'The user dismissed this question',
          endTurn: true,
        })
      clearOrphan(request.sessionID)
      return true
    },
  }
}

/** The asks' type. */
export type FakeAsks = ReturnType<typeof createFakeAsks>
