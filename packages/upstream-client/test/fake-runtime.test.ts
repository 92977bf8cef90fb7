import { describe, expect, it } from 'vitest'
import type { Message, ToolPart } from '../src/index.ts'
import { createFakeRuntime, type FakeTurn } from '../src/testing/index.ts'
import { useFakeRuntime } from './support/msw.ts'

const turns: FakeTurn[] = []
const { fake, client } = useFakeRuntime({
  onTurn(turn, runtime) {
    turns.push(turn)
    if (turn.text.includes('[auto]')) runtime.completeTurn(turn.sessionId, `auto: ${turn.text}`)
  },
})

const toolParts = (messages: Message[]) =>
  messages.flatMap((m) => m.parts).filter((p): p is ToolPart => p.type === 'tool')
const lastAssistant = (messages: Message[]) => messages.filter((m) => m.info.role === 'assistant').at(-1)

describe('fake runtime', () => {
  it('answers 401 with the runtime’s challenge without credentials', async () => {
    const response = await fetch(fake.url('/global/health'))
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="Secure Area"')
  })

  it('creates an independent state per instance', () => {
    const a = createFakeRuntime()
    const b = createFakeRuntime()
    a.addSession()
    expect(b.state.sessions.size).toBe(0)
  })

  it('runs onTurn after the 204 and lets it complete the turn', async () => {
    const c = client()
    const session = await c.createSession()
    const messageID = c.newMessageId()
    await c.promptAsync(session.id, {
      messageID,
      agent: 'remote',
      parts: [{ type: 'text', text: 'hello [auto]' }],
    })
    const done = await c.events.waitUntil(
      session.id,
      async () => lastAssistant((await c.listMessages(session.id)).messages),
      { timeoutMs: 2_000 },
    )
    expect(turns.at(-1)).toMatchObject({
      sessionId: session.id,
      messageID,
      agent: 'remote',
      text: 'hello [auto]',
    })
    expect(done?.info).toMatchObject({ role: 'assistant', parentID: messageID, finish: 'stop' })
    expect(done?.parts.map((p) => p.type)).toEqual(['step-start', 'text', 'step-finish'])
  })

  it('refuses a messageID without the msg prefix, like the runtime', async () => {
    const c = client()
    const session = await c.createSession()
    await expect(
      c.promptAsync(session.id, { messageID: 'job-123', parts: [{ type: 'text', text: 'x' }] }),
    ).rejects.toMatchObject({ code: 'ERR_UPSTREAM_HTTP', status: 400 })
  })

  it('appends to the old message when a messageID is reused, and runs a new turn', async () => {
    const c = client()
    const session = await c.createSession()
    const messageID = c.newMessageId()
    await c.promptAsync(session.id, { messageID, parts: [{ type: 'text', text: 'one' }] })
    fake.completeTurn(session.id, 'first')
    await c.promptAsync(session.id, { messageID, parts: [{ type: 'text', text: 'two' }] })
    const user = await c.getMessage(session.id, messageID)
    expect(user.parts.map((p) => (p.type === 'text' ? p.text : p.type))).toEqual(['one', 'two'])
    expect(fake.runningTurn(session.id)).toBe(messageID)
  })

  it('queues a prompt sent while busy and runs it after the current turn', async () => {
    const c = client()
    const session = await c.createSession()
    const first = fake.prompt(session.id, 'first')
    const second = fake.prompt(session.id, 'second')
    expect(fake.runningTurn(session.id)).toBe(first)
    fake.completeTurn(session.id, 'one')
    expect(fake.runningTurn(session.id)).toBe(second)
    expect((await c.sessionStatus())[session.id]).toEqual({ type: 'busy' })
    fake.completeTurn(session.id, 'two')
    expect((await c.sessionStatus())[session.id]).toBeUndefined()
  })

  it('drops queued prompts when a turn fails', async () => {
    const c = client()
    const session = await c.createSession()
    fake.prompt(session.id, 'first')
    fake.prompt(session.id, 'second')
    fake.failTurn(session.id, { message: 'bad request' })
    expect(fake.runningTurn(session.id)).toBeUndefined()
    const failed = lastAssistant((await c.listMessages(session.id)).messages)
    expect(failed?.info).toMatchObject({ error: { name: 'APIError', data: { message: 'bad request' } } })
  })

  it.each([
    ['once', undefined, 'completed', true],
    ['always', undefined, 'completed', true],
    ['reject', 'use ls instead', 'error', true],
    ['reject', undefined, 'error', false],
  ] as const)(
    'permission %s (message %s): tool %s, turn goes on: %s',
    async (reply, message, state, goesOn) => {
      const c = client()
      const session = await c.createSession()
      fake.prompt(session.id, 'run')
      const ask = fake.askPermission(session.id, { patterns: ['echo x'] })
      expect(await c.replyPermission(ask.id, reply, message)).toBe(true)
      const { messages } = await c.listMessages(session.id)
      const tool = toolParts(messages).at(-1)
      expect(tool?.state.status).toBe(state)
      if (message) expect(tool?.state.error).toContain(message)
      expect(fake.runningTurn(session.id) !== undefined).toBe(goesOn)
      if (!goesOn) expect(lastAssistant(messages)?.info).toMatchObject({ finish: 'tool-calls' })
      await expect(c.replyPermission(ask.id, 'once')).rejects.toMatchObject({
        code: 'ERR_UPSTREAM_NOT_FOUND',
      })
    },
  )

  it('answers and dismisses questions like the runtime', async () => {
    const c = client()
    const session = await c.createSession()
    fake.prompt(session.id, 'ask')
    const question = fake.askQuestion(session.id)
    expect((await c.listQuestions(session.id))[0]?.questions[0]?.options.map((o) => o.label)).toEqual([
      'Blue',
      'Red',
    ])
    await c.replyQuestion(question.id, [['Blue']])
    expect(toolParts((await c.listMessages(session.id)).messages).at(-1)?.state.output).toBe(
      'User has answered your questions: "Which colour?"="Blue"',
    )
    const again = fake.askQuestion(session.id)
    await c.rejectQuestion(again.id)
    expect(toolParts((await c.listMessages(session.id)).messages).at(-1)?.state.error).toBe(
      'The user dismissed this question',
    )
    expect(fake.runningTurn(session.id)).toBeUndefined()
  })

  it('abort ends the turn with MessageAbortedError and leaves a pending ask listed (measured)', async () => {
    const c = client()
    const session = await c.createSession()
    fake.prompt(session.id, 'run')
    const ask = fake.askPermission(session.id)
    expect(await c.abortSession(session.id)).toBe(true)
    const { messages } = await c.listMessages(session.id)
    expect(lastAssistant(messages)?.info.error).toMatchObject({ name: 'MessageAbortedError' })
    expect(toolParts(messages).at(-1)?.state).toMatchObject({
      status: 'error',
      error: 'Tool execution aborted',
    })
    expect((await c.sessionStatus())[session.id]).toBeUndefined()
    expect((await c.listPermissions(session.id)).map((p) => p.id)).toEqual([ask.id])
    expect(await c.abortSession(session.id)).toBe(true)
  })

  it('forks like the runtime: messages before the fork point with new ids, metadata copied', async () => {
    const c = client()
    const session = await c.createSession({ title: 'origin', metadata: { owner: 'a' } })
    const first = fake.prompt(session.id, 'one')
    fake.completeTurn(session.id, 'answer one')
    const second = fake.prompt(session.id, 'two')
    fake.completeTurn(session.id, 'answer two')
    const whole = await c.forkSession(session.id)
    expect(whole).toMatchObject({ title: 'origin (fork #1)', metadata: { owner: 'a' } })
    expect(whole.parentID).toBeUndefined()
    const copied = (await c.listMessages(whole.id)).messages
    expect(copied).toHaveLength(4)
    expect(copied.map((m) => m.info.id)).not.toContain(first)
    expect(copied[1]?.info.role === 'assistant' && copied[1].info.parentID).toBe(copied[0]?.info.id)
    const partial = await c.forkSession(session.id, { messageID: second })
    expect(partial.title).toBe('origin (fork #2)')
    expect((await c.listMessages(partial.id)).messages).toHaveLength(2)
    const rewritten = await c.updateSessionMetadata(partial.id, { owner: 'b' })
    expect(rewritten.metadata).toEqual({ owner: 'b' })
    expect((await c.getSession(session.id)).metadata).toEqual({ owner: 'a' })
  })

  it('pages messages with limit, before and x-next-cursor', async () => {
    const c = client()
    const session = await c.createSession()
    for (let i = 0; i < 3; i++) {
      fake.prompt(session.id, `q${i}`)
      fake.completeTurn(session.id, `a${i}`)
    }
    const newest = await c.listMessages(session.id, { limit: 4 })
    expect(newest.messages).toHaveLength(4)
    expect(newest.nextCursor).toBeDefined()
    const older = await c.listMessages(session.id, { limit: 4, before: newest.nextCursor })
    expect(older.messages).toHaveLength(2)
    expect(older.nextCursor).toBeUndefined()
    const all = await c.listMessages(session.id)
    expect(all.messages.map((m) => m.info.id)).toEqual(
      [...older.messages, ...newest.messages].map((m) => m.info.id),
    )
  })
})

describe('listSessions against the runtime’s 100-session default limit', () => {
  it('the runtime route cuts at 100 without a limit', async () => {
    const many = createFakeRuntime()
    for (let i = 0; i < 150; i++) many.addSession()
    const { listSessionsPage } = await import('../src/testing/fake-queries.ts')
    expect(listSessionsPage(many.state, new URLSearchParams())).toHaveLength(100)
  })

  it('returns every session, growing the limit while pages come back full', async () => {
    const c = client()
    for (let i = 0; i < 1_050; i++) fake.addSession({ title: `bulk ${i}` })
    fake.requests.length = 0
    const sessions = await c.listSessions({ search: 'bulk ' })
    expect(sessions).toHaveLength(1_050)
    expect(new Set(sessions.map((s) => s.id)).size).toBe(1_050)
    expect(fake.requests.map((r) => r.query.limit)).toEqual(['1000', '10000'])
    const roots = await c.listSessions({ roots: true })
    expect(roots.every((s) => s.parentID === undefined)).toBe(true)
  })
})

describe('listSessionPage: one GET /session page with the runtime’s filters', () => {
  const seed = (n: number, updated: number, parentID?: string) => {
    const s = fake.addSession({ title: `paged ${n}`, metadata: { owner: n }, ...(parentID && { parentID }) })
    fake.state.sessions.set(s.id, { ...s, time: { created: updated, updated } })
    return s.id
  }

  it('sends limit, start and roots, and returns that page newest first', async () => {
    fake.state.sessions.clear()
    const ids = Array.from({ length: 30 }, (_, n) => seed(n, 1_000 + n))
    seed(99, 5_000, ids[0])
    fake.requests.length = 0
    const c = client()
    const page = await c.listSessionPage({ roots: true, limit: 10 })
    expect(page.map((s) => s.id)).toEqual([...ids].reverse().slice(0, 10))
    const since = await c.listSessionPage({ roots: true, limit: 100, start: 1_025 })
    expect(since.map((s) => s.time.updated)).toEqual([1_029, 1_028, 1_027, 1_026, 1_025])
    expect(fake.requests.map((r) => r.query)).toEqual([
      expect.objectContaining({ roots: 'true', limit: '10' }),
      expect.objectContaining({ roots: 'true', limit: '100', start: '1025' }),
    ])
  })

  it('keeps only the fields a listing reads', async () => {
    fake.state.sessions.clear()
    seed(1, 2_000)
    const [item] = await client().listSessionPage({ limit: 5 })
    expect(Object.keys(item ?? {}).sort()).toEqual(['id', 'metadata', 'time', 'title'])
    expect(item?.time).toEqual({ created: 2_000, updated: 2_000 })
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses limit %s before sending anything', async (limit) => {
    fake.requests.length = 0
    await expect(client().listSessionPage({ limit })).rejects.toThrow(RangeError)
    expect(fake.requests).toHaveLength(0)
  })

  it('fails with ERR_UPSTREAM_SCHEMA when a used field is missing', async () => {
    fake.state.sessions.clear()
    const id = seed(1, 3_000)
    const s = fake.state.sessions.get(id)
    if (s) fake.state.sessions.set(id, { ...s, title: 42 } as never)
    await expect(client().listSessionPage({ limit: 5 })).rejects.toMatchObject({
      code: 'ERR_UPSTREAM_SCHEMA',
    })
  })
})
