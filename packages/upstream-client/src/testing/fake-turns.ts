import type { AssistantMessage, Message, Part, ToolPart } from '../schemas.ts'
import { fakeId } from './fake-ids.ts'
import { type FakeContext, touchSession } from './fake-sessions.ts'

/** A turn that just started, as handed to the fake's `onTurn` hook. */
export interface FakeTurn {
  readonly sessionId: string
  /** The user message id (the `messageID` the client chose). */
  readonly messageID: string
  readonly agent: string
  /** The text parts of the prompt, joined with a newline. */
  readonly text: string
}

/** A prompt body as `POST /session/{id}/prompt_async` receives it (already checked). */
export interface FakePromptBody {
  readonly messageID?: string
  readonly agent?: string
  readonly model?: { providerID: string; modelID: string }
  readonly parts: readonly Record<string, unknown>[]
}

const zeroTokens = () => ({ input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } })

/** The turn machinery of the fake runtime: prompts, answers, asks, failures, aborts. */
export function createFakeTurns(ctx: FakeContext, onTurn: (turn: FakeTurn) => void) {
  const { state, hub } = ctx
  const messagesOf = (sessionId: string): Message[] => state.messages.get(sessionId) ?? []
  const running = (sessionId: string): string | undefined => state.turns.get(sessionId)?.[0]

  const requireRunning = (sessionId: string): string => {
    const id = running(sessionId)
    if (!id || !state.sessions.has(sessionId))
      throw new Error(`fake runtime: no running turn in ${sessionId}`)
    return id
  }

  const emitMessage = (message: Message): void => {
    hub.emit('message.updated', { sessionID: message.info.sessionID, info: message.info })
  }
  const addPart = (message: Message, part: Record<string, unknown>): Part => {
    const full = {
      id: fakeId('prt', ctx.now),
      sessionID: message.info.sessionID,
      messageID: message.info.id,
      ...part,
    }
    message.parts.push(full as Part)
    hub.emit('message.part.updated', { sessionID: message.info.sessionID, part: full, time: ctx.now() })
    return full as Part
  }

  /** The open assistant message of the running turn, created (with a step-start) if needed. */
  const assistantOf = (sessionId: string): Message & { info: AssistantMessage } => {
    const parentID = requireRunning(sessionId)
    const open = messagesOf(sessionId).find(
      (m) =>
        m.info.role === 'assistant' && m.info.parentID === parentID && m.info.time.completed === undefined,
    )
    if (open) return open as Message & { info: AssistantMessage }
    const session = state.sessions.get(sessionId)
    const user = messagesOf(sessionId).find((m) => m.info.id === parentID)
    const agent = (user?.info.agent as string | undefined) ?? session?.agent ?? 'build'
    const info: AssistantMessage = {
      id: fakeId('msg', ctx.now),
      sessionID: sessionId,
      role: 'assistant',
      parentID,
      time: { created: ctx.now() },
      modelID: 'fake-1',
      providerID: 'fake',
      mode: agent,
      agent,
      path: { cwd: ctx.directory, root: '/' },
      cost: 0,
      tokens: zeroTokens(),
    }
    const message = { info, parts: [] } as Message & { info: AssistantMessage }
    messagesOf(sessionId).push(message)
    emitMessage(message)
    addPart(message, { type: 'step-start' })
    return message
  }

  const closeAssistant = (
    message: Message & { info: AssistantMessage },
    change: Partial<AssistantMessage>,
  ): void => {
    Object.assign(message.info, change, { time: { ...message.info.time, completed: ctx.now() } })
    emitMessage(message)
  }

  const setStatus = (sessionId: string, busy: boolean): void => {
    if (busy === state.status.has(sessionId)) return
    if (busy) state.status.set(sessionId, { type: 'busy' })
    else state.status.delete(sessionId)
    hub.emit('session.status', { sessionID: sessionId, status: { type: busy ? 'busy' : 'idle' } })
    if (!busy) hub.emit('session.idle', { sessionID: sessionId })
  }

  const startTurn = (sessionId: string, messageID: string): void => {
    setStatus(sessionId, true)
    const user = messagesOf(sessionId).find((m) => m.info.id === messageID)
    const text = (user?.parts ?? [])
      .filter((p): p is Part & { text: string } => p.type === 'text')
      .map((p) => p.text)
      .join('\n')
    const agent = (user?.info.agent as string | undefined) ?? 'build'
    // After the 204, like the runtime, whose loop runs detached from the request.
    setTimeout(() => {
      if (running(sessionId) !== messageID) return
      try {
        onTurn({ sessionId, messageID, agent, text })
      } catch (error) {
        console.error('fake runtime: onTurn threw', error)
      }
    }, 0)
  }

  /** Ends the running turn; the next queued one starts, or the session goes idle. */
  const endTurn = (sessionId: string, dropQueue = false): void => {
    const queue = state.turns.get(sessionId) ?? []
    queue.shift()
    if (dropQueue) queue.length = 0
    touchSession(ctx, sessionId)
    const next = queue[0]
    if (next) startTurn(sessionId, next)
    else {
      state.turns.delete(sessionId)
      setStatus(sessionId, false)
    }
  }

  const toolError = (part: ToolPart, error: string, metadata?: Record<string, unknown>): void => {
    part.state = { ...part.state, status: 'error', error, ...(metadata ? { metadata } : {}) }
  }

  return {
    running,

    prompt(sessionId: string, body: FakePromptBody): void {
      const session = state.sessions.get(sessionId)
      if (!session) throw new Error(`fake runtime: no session ${sessionId}`)
      const messageID = body.messageID ?? fakeId('msg', ctx.now)
      let user = messagesOf(sessionId).find((m) => m.info.id === messageID)
      // Reusing an id appends to the old message and runs a new turn (NOTES §3), like the runtime.
      if (!user) {
        user = {
          info: {
            id: messageID,
            sessionID: sessionId,
            role: 'user',
            time: { created: ctx.now() },
            agent: body.agent ?? session.agent ?? 'build',
            model: body.model ?? { providerID: 'fake', modelID: 'fake-1' },
            summary: { diffs: [] },
          },
          parts: [],
        } as Message
        messagesOf(sessionId).push(user)
      }
      emitMessage(user)
      for (const part of body.parts) addPart(user, part)
      touchSession(ctx, sessionId)
      const queue = state.turns.get(sessionId) ?? []
      state.turns.set(sessionId, queue)
      queue.push(messageID)
      if (queue.length === 1) startTurn(sessionId, messageID)
    },

    completeTurn(sessionId: string, text: string): Message {
      const message = assistantOf(sessionId)
      addPart(message, { type: 'text', text, time: { start: ctx.now(), end: ctx.now() } })
      const tokens = {
        input: 10,
        output: Math.max(1, text.length),
        reasoning: 0,
        cache: { read: 0, write: 0 },
      }
      addPart(message, { type: 'step-finish', reason: 'stop', cost: 0, tokens })
      closeAssistant(message, { finish: 'stop', tokens })
      endTurn(sessionId)
      return message
    },

    failTurn(
      sessionId: string,
      error: { name?: string; message?: string; statusCode?: number } = {},
    ): Message {
      const message = assistantOf(sessionId)
      const detail = {
        name: error.name ?? 'APIError',
        data: {
          message: error.message ?? 'Bad Request',
          statusCode: error.statusCode ?? 400,
          isRetryable: false,
        },
      }
      closeAssistant(message, { error: detail })
      hub.emit('session.error', { sessionID: sessionId, error: detail })
      // A failed turn drops what was queued behind it (NOTES §5).
      endTurn(sessionId, true)
      return message
    },

    /** Opens a tool call on the running turn's assistant message. */
    openTool(
      sessionId: string,
      tool: string,
      input: Record<string, unknown>,
    ): { message: Message; part: ToolPart } {
      const message = assistantOf(sessionId)
      const part = addPart(message, {
        type: 'tool',
        callID: fakeId('call', ctx.now),
        tool,
        state: { status: 'running', input, time: { start: ctx.now() } },
      }) as ToolPart
      return { message, part }
    },

    /** Settles a tool call: completed with `output`, or failed with `error` (ending the turn if asked to). */
    settleTool(
      sessionId: string,
      callID: string,
      outcome: { output: string } | { error: string; endTurn: boolean },
    ): void {
      const message = messagesOf(sessionId).find((m) =>
        m.parts.some((p) => p.type === 'tool' && p.callID === callID),
      )
      const part = message?.parts.find((p): p is ToolPart => p.type === 'tool' && p.callID === callID)
      // A call already settled (e.g. failed by an abort) stays as it is.
      if (!message || !part || (part.state.status !== 'running' && part.state.status !== 'pending')) return
      if ('output' in outcome)
        part.state = { ...part.state, status: 'completed', output: outcome.output, title: part.tool }
      else toolError(part, outcome.error)
      hub.emit('message.part.updated', { sessionID: sessionId, part, time: ctx.now() })
      if ('endTurn' in outcome && outcome.endTurn && running(sessionId)) {
        closeAssistant(message as Message & { info: AssistantMessage }, { finish: 'tool-calls' })
        endTurn(sessionId)
      }
    },

    /**
     * Aborts like the runtime: the open assistant message gets `MessageAbortedError`, running tools
     * fail with "Tool execution aborted", queued turns are dropped, the session goes idle. Pending
     * asks stay listed (measured on 1.18.33: abort alone leaves the ask behind).
     */
    abort(sessionId: string): void {
      if (!running(sessionId) || !state.sessions.has(sessionId)) return
      const message = assistantOf(sessionId)
      for (const part of message.parts)
        if (part.type === 'tool' && (part.state.status === 'running' || part.state.status === 'pending')) {
          toolError(part, 'Tool execution aborted', { interrupted: true })
          hub.emit('message.part.updated', { sessionID: sessionId, part, time: ctx.now() })
        }
      const error = { name: 'MessageAbortedError', data: { message: 'Aborted' } }
      closeAssistant(message, { error })
      hub.emit('session.error', { sessionID: sessionId, error })
      endTurn(sessionId, true)
    },
  }
}

/** The turn machinery's type. */
export type FakeTurns = ReturnType<typeof createFakeTurns>
