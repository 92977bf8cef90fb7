import { describe, expect, it } from 'vitest'
import { fakeEvents } from './event-source.test-helpers.js'
import { createTodoView, MAX_SESSIONS, MAX_TODO_CHARS, MAX_TODOS, MAX_TOTAL_CHARS } from './todo-view.js'

/** The event stream the test drives, with the two events the todo view learns from. */
function fakeStream() {
  const stream = fakeEvents()
  return {
    source: { events: stream.events },
    connect: stream.connect,
    emit: stream.emit,
    created: (id: string) => stream.emit('session.created', { sessionID: id, info: { id } }),
    todos: (id: string, todos: unknown) => stream.emit('todo.updated', { sessionID: id, todos }),
  }
}

const todo = (content: string) => ({ content, status: 'pending', priority: 'high' })

describe('createTodoView', () => {
  it('knows a session seen created (no todos) or updated on the live stream, and nothing else', () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    f.connect(true)
    expect(view.get('s0')).toBeUndefined()
    f.created('s1')
    expect(view.get('s1')).toEqual([])
    f.todos('s1', [todo('a'), todo('b')])
    expect(view.get('s1')).toEqual([todo('a'), todo('b')])
    // A list updated for a session created before the stream went live: the whole list came.
    f.todos('s2', [todo('c')])
    expect(view.get('s2')).toEqual([todo('c')])
  })

  it('forgets a deleted session', () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    f.connect(true)
    f.todos('s1', [todo('a')])
    f.emit('session.deleted', { sessionID: 's1', info: { id: 's1' } })
    expect(view.get('s1')).toBeUndefined()
  })

  it('knows nothing while the stream is not live, and starts from nothing after a drop or a stall', () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    // An event dispatched while the stream does not report itself live is not learned, even if
    // no connection change comes between (the view reads `connected` at each event).
    f.source.events.connected = false
    f.created('s0')
    f.source.events.connected = true
    expect(view.get('s0')).toBeUndefined()
    f.source.events.connected = false
    f.connect(true)
    f.created('s1')
    f.connect(false)
    expect(view.get('s1')).toBeUndefined()
    // Events may have been missed meanwhile: what it knew before is gone for good.
    f.connect(true)
    expect(view.get('s1')).toBeUndefined()
    f.todos('s1', [todo('new')])
    expect(view.get('s1')).toEqual([todo('new')])
  })

  it('does not keep a list it cannot read, or one too large: those are read from the runtime', () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    f.connect(true)
    f.todos('s1', [todo('a')])
    f.todos('s1', [{ content: 42 }])
    expect(view.get('s1')).toBeUndefined()
    f.todos('s2', 'not a list')
    expect(view.get('s2')).toBeUndefined()
    f.todos(
      's3',
      Array.from({ length: MAX_TODOS + 1 }, (_, i) => todo(`t${i}`)),
    )
    expect(view.get('s3')).toBeUndefined()
    f.todos('s4', [todo('x'.repeat(MAX_TODO_CHARS))])
    expect(view.get('s4')).toBeUndefined()
    f.todos(
      's5',
      Array.from({ length: MAX_TODOS }, (_, i) => todo(`t${i}`)),
    )
    expect(view.get('s5')).toHaveLength(MAX_TODOS)
  })

  it('gives the fields the port reads and a copy callers may change', () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    f.connect(true)
    f.todos('s1', [{ ...todo('a'), id: 'runtime-id', extra: { big: true } }])
    const [first] = view.get('s1') ?? []
    expect(first).toEqual(todo('a'))
    if (first) first.content = 'changed'
    expect(view.get('s1')).toEqual([todo('a')])
  })

  it(`keeps at most ${MAX_SESSIONS} sessions, forgetting the least recently learned`, () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    f.connect(true)
    for (let i = 0; i <= MAX_SESSIONS; i++) f.created(`s${i}`)
    expect(view.get('s0')).toBeUndefined()
    expect(view.get('s1')).toEqual([])
    // Learned again: the newest now.
    f.todos('s1', [todo('a')])
    f.created('extra')
    expect(view.get('s1')).toEqual([todo('a')])
    expect(view.get('s2')).toBeUndefined()
  })

  it(`keeps at most ${MAX_TOTAL_CHARS} characters of lists in all, forgetting the least recently learned`, () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    f.connect(true)
    // Each list just under the per-list bound; enough of them to pass the total.
    const big = (i: number) => [todo(`${i}`.padEnd(MAX_TODO_CHARS - 20, 'x'))]
    const count = Math.ceil(MAX_TOTAL_CHARS / (MAX_TODO_CHARS - 20)) + 1
    for (let i = 0; i < count; i++) f.todos(`s${i}`, big(i))
    expect(view.get('s0')).toBeUndefined()
    expect(view.get(`s${count - 1}`)).toEqual(big(count - 1))
    let kept = 0
    for (let i = 0; i < count; i++) if (view.get(`s${i}`)) kept++
    expect(kept).toBeLessThanOrEqual(Math.floor(MAX_TOTAL_CHARS / (MAX_TODO_CHARS - 20)))
    expect(kept).toBeGreaterThan(count / 2)
    // Replacing a big list with a small one frees its characters for others.
    f.todos(`s${count - 1}`, [todo('small')])
    f.todos('again', big(0))
    expect(view.get(`s${count - 2}`)).toEqual(big(count - 2))
  })

  it('stops learning once closed', () => {
    const f = fakeStream()
    const view = createTodoView(f.source)
    f.connect(true)
    f.created('s1')
    view.close()
    expect(view.get('s1')).toBeUndefined()
    f.created('s2')
    expect(view.get('s2')).toBeUndefined()
  })
})
