import { type RawEvent, TodoSchema, type UpstreamClient } from '@sallyport/upstream-client'
import { z } from 'zod'
import type { RuntimeTodo } from './port.js'

/**
 * Sessions' todo lists kept from the runtime's event stream, so that a job woken by the end of
 * its run answers after one read (its messages) instead of two (`jobs/turn-reads.ts`).
 *
 * The runtime writes a session's todos in one place, which publishes `todo.updated` with the
 * whole list; a session starts with none (a fork copies none: measured on opencode 1.18.33); a
 * deleted session has none. So the view knows a session's list exactly when it has seen, on one
 * unbroken live stream, the session created or its list updated: from then on every change
 * reaches it in order. It knows nothing of the others (created before the stream went live,
 * or forgotten), nor anything at all while the stream is not live; after a drop or a stall it
 * starts again from nothing, as what it missed cannot be told. Callers read the runtime when it
 * does not know.
 *
 * Bounded: at most {@link MAX_SESSIONS} sessions and {@link MAX_TOTAL_CHARS} characters in all
 * (the least recently learned are forgotten first), and a list longer than {@link MAX_TODOS} items
 * or {@link MAX_TODO_CHARS} characters is not kept.
 */
export interface TodoView {
  /** The session's todos as its events left them, or `undefined` when the view does not know. */
  get(sessionId: string): RuntimeTodo[] | undefined
  close(): void
}

/** Sessions whose lists are kept at most. */
export const MAX_SESSIONS = 4_096
/** Items of a list kept at most; a longer list is read from the runtime. */
export const MAX_TODOS = 64
/** Characters of a list's strings kept at most; a larger list is read from the runtime. */
export const MAX_TODO_CHARS = 16_384
/** Characters of all lists kept at most (about 2 MB): the least recently learned go first. */
export const MAX_TOTAL_CHARS = 1_000_000

/** What the view needs of the upstream client (a structural subset, so tests can stand in). */
interface Source {
  events: Pick<UpstreamClient['events'], 'onEvent' | 'onConnectionChange' | 'connected'>
}

const TodoList = z.array(TodoSchema)

interface Kept {
  readonly todos: readonly RuntimeTodo[]
  readonly chars: number
}

const NO_TODOS: Kept = Object.freeze({ todos: Object.freeze([]), chars: 0 })

/** The list as the port's `todos` gives it (the same fields), or `undefined` when it is too large to keep. */
function keepable(todos: z.output<typeof TodoList>): Kept | undefined {
  if (todos.length > MAX_TODOS) return undefined
  let chars = 0
  const kept: RuntimeTodo[] = []
  for (const todo of todos) {
    chars += todo.content.length + todo.status.length + todo.priority.length
    if (chars > MAX_TODO_CHARS) return undefined
    kept.push(Object.freeze({ content: todo.content, status: todo.status, priority: todo.priority }))
  }
  return Object.freeze({ todos: Object.freeze(kept), chars })
}

export function createTodoView(client: Source): TodoView {
  const lists = new Map<string, Kept>()
  let chars = 0

  const forget = (sessionId: string): void => {
    const old = lists.get(sessionId)
    if (!old) return
    chars -= old.chars
    lists.delete(sessionId)
  }
  const learn = (sessionId: string, kept: Kept | undefined): void => {
    forget(sessionId)
    if (kept === undefined) return
    lists.set(sessionId, kept)
    chars += kept.chars
    for (const oldest of lists.keys()) {
      if (lists.size <= MAX_SESSIONS && chars <= MAX_TOTAL_CHARS) break
      forget(oldest)
    }
  }
  const clear = (): void => {
    lists.clear()
    chars = 0
  }

  function onEvent(event: RawEvent): void {
    if (!client.events.connected) return
    // The three events name their session in `sessionID`, as the status view reads it.
    const props = (event.properties ?? {}) as { sessionID?: unknown; todos?: unknown }
    const id = props.sessionID
    if (typeof id !== 'string') return
    if (event.type === 'session.created') learn(id, NO_TODOS)
    else if (event.type === 'session.deleted') forget(id)
    else if (event.type === 'todo.updated') {
      const parsed = TodoList.safeParse(props.todos)
      // A list the view cannot read is not known: the runtime is asked instead.
      learn(id, parsed.success ? keepable(parsed.data) : undefined)
    }
  }

  // Any change of the connection ends what the view knew: events may have been missed.
  const offConnection = client.events.onConnectionChange(clear)
  const offEvents = client.events.onEvent(onEvent)

  return {
    get: (sessionId) => {
      if (!client.events.connected) return undefined
      return lists.get(sessionId)?.todos.map((todo) => ({ ...todo }))
    },
    close() {
      offEvents()
      offConnection()
      clear()
    },
  }
}
