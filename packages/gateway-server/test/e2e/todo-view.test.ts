import { type Stack, startStack, step, waitFor } from '@sallyport/testkit'
import { createUpstreamClient, newMessageId, type UpstreamClient } from '@sallyport/upstream-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTodoView, type TodoView } from '../../src/runtime/todo-view.js'

// The todo view (`src/runtime/todo-view.ts`) stands in for a todo read beside the event view's
// idle. It rests on what the runtime does: every change of a session's list is announced with
// the whole list, a new session (a fork too) starts with none, a deleted one has none. Checked
// here against the pinned runtime: at each step, what the view knows equals what a read answers.

let stack: Stack
let upstream: UpstreamClient
let view: TodoView

beforeAll(async () => {
  stack = await startStack()
  upstream = createUpstreamClient({
    baseUrl: stack.runtime.url,
    username: stack.runtime.username,
    password: stack.runtime.password,
    directory: stack.runtime.directory,
  })
  view = createTodoView(upstream)
  // Subscribing starts the stream; the view learns only once it is live.
  const off = upstream.events.onEvent(() => undefined)
  await waitFor(() => upstream.events.connected, { timeoutMs: 20_000, description: 'event stream live' })
  off()
}, 90_000)

afterAll(async () => {
  view?.close()
  upstream?.close()
  await stack?.stop()
})

/** Runs one turn of `steps` in the session and waits until the runtime shows it over. */
async function runTurn(sessionId: string, steps: Parameters<Stack['model']['script']>[0]): Promise<void> {
  const marker = stack.model.script(steps)
  const idle = new Promise<void>((resolve) => {
    const off = upstream.events.onSession(sessionId, (event) => {
      if (event.type === 'session.idle') {
        off()
        resolve()
      }
    })
  })
  await upstream.promptAsync(sessionId, {
    messageID: newMessageId(),
    parts: [{ type: 'text', text: `go ${marker}` }],
  })
  await idle
}

describe('the todo view against the runtime', () => {
  it('agrees with todo reads through creation, updates, a fork and a deletion', async () => {
    const session = await upstream.createSession({})
    await waitFor(() => view.get(session.id), { description: 'the creation seen' })
    expect(view.get(session.id)).toEqual(await upstream.todos(session.id))
    expect(view.get(session.id)).toEqual([])

    await runTurn(session.id, [
      step.todowrite([
        { content: 'first', status: 'pending', priority: 'high' },
        { content: 'second', status: 'in_progress', priority: 'low' },
      ]),
      { text: 'planned' },
    ])
    const read = await upstream.todos(session.id)
    expect(read).toHaveLength(2)
    expect(view.get(session.id)).toEqual(
      read.map(({ content, status, priority }) => ({ content, status, priority })),
    )

    await runTurn(session.id, [
      step.todowrite([{ content: 'first', status: 'completed', priority: 'high' }]),
      { text: 'done' },
    ])
    expect(view.get(session.id)).toEqual([{ content: 'first', status: 'completed', priority: 'high' }])
    expect(await upstream.todos(session.id)).toMatchObject([{ content: 'first', status: 'completed' }])

    // A fork copies the messages, not the todos: the view's "none" must hold for it.
    const fork = await upstream.forkSession(session.id, {})
    await waitFor(() => view.get(fork.id), { description: 'the fork seen' })
    expect(await upstream.todos(fork.id)).toEqual([])
    expect(view.get(fork.id)).toEqual([])

    await upstream.deleteSession(session.id)
    await waitFor(() => view.get(session.id) === undefined, { description: 'the deletion seen' })
  })
})
