import type {
  CreateSessionInput,
  Message,
  PermissionRequest,
  PromptAsyncInput,
  QuestionRequest,
  Session,
  SessionEvent,
} from '@sallyport/upstream-client'
import type { RunRuntime } from '../src/run-task.ts'

type Events = RunRuntime['events']

interface WaitOptions {
  readonly timeoutMs: number
  readonly signal?: AbortSignal
}

/**
 * A hand-written {@link RunRuntime}: one session (`ses_fake0001`), messages the test adds, and
 * `events.waitUntil` / `events.waitFor` with the documented semantics (check once at once and
 * again on each notification; resolve `undefined` at the deadline; reject when the signal aborts).
 */
export class FakeRunRuntime implements RunRuntime {
  readonly sessionId = 'ses_fake0001'
  readonly userMessageId = 'msg_user0001'
  sessionInput: CreateSessionInput | undefined
  prompt: { sessionId: string; input: PromptAsyncInput } | undefined
  readonly settled: string[] = []
  readonly permissionReplies: { id: string; reply: string }[] = []
  readonly rejectedQuestions: string[] = []
  permissions: PermissionRequest[] = []
  questions: QuestionRequest[] = []
  messages: Message[] = []
  createSessionError: unknown
  promptError: unknown
  /** Called once `waitUntil` is registered (the run is waiting for its answer). */
  onWaitUntil: (() => void) | undefined
  /** Called after the prompt was accepted. */
  onPrompt: (() => void) | undefined
  waitUntilCalls = 0

  private readonly checks = new Set<() => void>()
  private readonly listeners = new Set<(event: SessionEvent) => void>()

  createSession = async (input?: CreateSessionInput): Promise<Session> => {
    if (this.createSessionError !== undefined) throw this.createSessionError
    this.sessionInput = input
    return { id: this.sessionId, title: input?.title ?? '', time: { created: 0, updated: 0 } } as Session
  }

  promptAsync = async (sessionId: string, input: PromptAsyncInput): Promise<void> => {
    if (this.promptError !== undefined) throw this.promptError
    this.prompt = { sessionId, input }
    this.onPrompt?.()
  }

  listMessages = async (): Promise<{ messages: Message[] }> => ({ messages: [...this.messages] })

  listPermissions = async (): Promise<PermissionRequest[]> => [...this.permissions]

  replyPermission = async (requestId: string, reply: string): Promise<boolean> => {
    this.permissionReplies.push({ id: requestId, reply })
    this.permissions = this.permissions.filter((ask) => ask.id !== requestId)
    return true
  }

  listQuestions = async (): Promise<QuestionRequest[]> => [...this.questions]

  rejectQuestion = async (requestId: string): Promise<boolean> => {
    this.rejectedQuestions.push(requestId)
    this.questions = this.questions.filter((question) => question.id !== requestId)
    return true
  }

  settleSession = async (sessionId: string) => {
    this.settled.push(sessionId)
    return { sessions: [sessionId], permissions: [], questions: [] }
  }

  newMessageId = (): string => this.userMessageId

  /** Adds the assistant's final answer to the turn and wakes the waiters. */
  answer(text: string, extra: Record<string, unknown> = {}): void {
    this.messages.push({
      info: {
        id: 'msg_assistant01',
        sessionID: this.sessionId,
        role: 'assistant',
        parentID: this.userMessageId,
        time: { created: 1, completed: 2 },
        finish: 'stop',
        ...extra,
      },
      parts: [
        { id: 'prt_text0001', sessionID: this.sessionId, messageID: 'msg_assistant01', type: 'text', text },
      ],
    } as Message)
    this.notify()
  }

  /** Delivers an event of the session: matching `waitFor`s resolve, `waitUntil` checks run again. */
  emit(event: SessionEvent): void {
    for (const listener of [...this.listeners]) listener(event)
    this.notify()
  }

  notify(): void {
    for (const check of [...this.checks]) check()
  }

  get waiting(): number {
    return this.checks.size + this.listeners.size
  }

  readonly events: Events = {
    connected: true,
    sequence: 0,
    lastError: undefined,
    onSession: () => () => {},
    onEvent: () => () => {},
    onConnectionChange: () => () => {},
    close: () => {},
    waitFor: (_sessionId, predicate, options) =>
      wait<SessionEvent>(options, (finish, fail) => {
        const listener = (event: SessionEvent): void => {
          try {
            if (predicate(event)) finish(event)
          } catch (error) {
            fail(error)
          }
        }
        this.listeners.add(listener)
        return () => this.listeners.delete(listener)
      }),
    waitUntil: <T>(
      _sessionId: string,
      check: (wake: { sequence: number }) => Promise<T | undefined>,
      options: WaitOptions,
    ) =>
      wait<T>(options, (finish, fail) => {
        this.waitUntilCalls++
        let running = false
        let again = false
        let done = false
        const run = (): void => {
          if (done) return
          if (running) {
            again = true
            return
          }
          running = true
          void (async () => {
            try {
              do {
                again = false
                const value = await check({ sequence: 0 })
                if (done) return
                if (value !== undefined) return finish(value)
              } while (again)
            } catch (error) {
              fail(error)
            } finally {
              running = false
            }
          })()
        }
        this.checks.add(run)
        run()
        queueMicrotask(() => this.onWaitUntil?.())
        return () => {
          done = true
          this.checks.delete(run)
        }
      }),
  }
}

function wait<T>(
  options: WaitOptions,
  body: (finish: (value: T | undefined) => void, fail: (error: unknown) => void) => () => void,
): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    const signal = options.signal
    if (signal?.aborted) return reject(signal.reason)
    let settled = false
    let cleanup: () => void = () => {}
    const settle = (action: () => void): void => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      signal?.removeEventListener('abort', onAbort)
      cleanup()
      action()
    }
    const onAbort = (): void => settle(() => reject(signal?.reason))
    const deadline = setTimeout(() => settle(() => resolve(undefined)), Math.max(0, options.timeoutMs))
    signal?.addEventListener('abort', onAbort, { once: true })
    const off = body(
      (value) => settle(() => resolve(value)),
      (error) => settle(() => reject(error)),
    )
    if (settled) off()
    else cleanup = off
  })
}
