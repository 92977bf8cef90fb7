import { type Stack, startStack } from '@sallyport/testkit'
import { afterAll, beforeAll } from 'vitest'
import {
  createUpstreamClient,
  type Message,
  type SessionEvent,
  type ToolPart,
  type UpstreamClient,
} from '../../src/index.ts'

/** What an end-to-end file shares: one real runtime + scripted model, and a client of it. */
export interface E2E {
  readonly stack: Stack
  readonly client: UpstreamClient
}

/**
 * Starts one real runtime (with the scripted model) for the whole file and a client pinned to its
 * workspace; stops both after the file. Prints the runtime's start time and the file's duration.
 */
export function useRuntime(name: string, options: Parameters<typeof startStack>[0] = {}): E2E {
  const state: { stack?: Stack; client?: UpstreamClient; started: number } = { started: 0 }
  beforeAll(async () => {
    state.started = Date.now()
    state.stack = await startStack(options)
    const { runtime } = state.stack
    state.client = createUpstreamClient({
      baseUrl: runtime.url,
      username: runtime.username,
      password: runtime.password,
      directory: runtime.directory,
    })
    process.stderr.write(
      `[e2e ${name}] runtime listening after ${runtime.listeningMs} ms, healthy after ${runtime.startupMs} ms\n`,
    )
  })
  afterAll(async () => {
    state.client?.close()
    await state.stack?.stop()
    process.stderr.write(`[e2e ${name}] file took ${Date.now() - state.started} ms (start to stop)\n`)
  })
  return {
    get stack() {
      if (!state.stack) throw new Error('runtime not started')
      return state.stack
    },
    get client() {
      if (!state.client) throw new Error('runtime not started')
      return state.client
    },
  }
}

/** Collects the typed events of one session (and stops with `off`). */
export function collect(
  client: UpstreamClient,
  sessionId: string,
): { events: SessionEvent[]; off: () => void } {
  const events: SessionEvent[] = []
  const off = client.events.onSession(sessionId, (event) => events.push(event))
  return { events, off }
}

/** Resolves once the shared stream is connected (so no event of what follows is missed). */
export async function streamReady(client: UpstreamClient, sessionId: string): Promise<void> {
  const ready = await client.events.waitUntil(
    sessionId,
    async () => (client.events.connected ? true : undefined),
    {
      timeoutMs: 10_000,
      pollMs: 50,
    },
  )
  if (!ready) throw new Error('event stream did not connect')
}

/** Assistant messages of the turn started by `messageID`. */
export function turnMessages(messages: Message[], messageID: string): Message[] {
  return messages.filter((m) => m.info.role === 'assistant' && m.info.parentID === messageID)
}

/**
 * Waits (event-driven, polling only while the stream is down) until the turn of `messageID` has
 * ended: the session is idle and the turn's last assistant message is completed. Returns all
 * messages of the session then.
 */
export async function turnEnded(
  client: UpstreamClient,
  sessionId: string,
  messageID: string,
  timeoutMs = 15_000,
): Promise<Message[]> {
  const result = await client.events.waitUntil(
    sessionId,
    async () => {
      const status = await client.sessionStatus()
      if (status[sessionId]) return undefined
      const { messages } = await client.listMessages(sessionId)
      const last = turnMessages(messages, messageID).at(-1)
      return last?.info.role === 'assistant' && last.info.time.completed !== undefined ? messages : undefined
    },
    { timeoutMs, pollMs: 200 },
  )
  if (!result) throw new Error(`turn ${messageID} did not end within ${timeoutMs} ms`)
  return result
}

/**
 * The first event of the session that matches: one already collected, or the next one to arrive
 * (no gap: both look at the same stream, whose events arrive asynchronously).
 */
export async function eventSeen(
  client: UpstreamClient,
  sessionId: string,
  collected: SessionEvent[],
  predicate: (event: SessionEvent) => boolean,
  timeoutMs = 10_000,
): Promise<SessionEvent> {
  const found =
    collected.find(predicate) ?? (await client.events.waitFor(sessionId, predicate, { timeoutMs }))
  if (!found) throw new Error(`event not seen; saw ${collected.map((e) => e.type).join(', ')}`)
  return found
}

/** Tool parts of a list of messages. */
export function toolParts(messages: Message[]): ToolPart[] {
  return messages.flatMap((m) => m.parts).filter((p): p is ToolPart => p.type === 'tool')
}

/** Text of the text parts of a list of messages. */
export function texts(messages: Message[]): string[] {
  return messages.flatMap((m) => m.parts).flatMap((p) => (p.type === 'text' ? [p.text] : []))
}
