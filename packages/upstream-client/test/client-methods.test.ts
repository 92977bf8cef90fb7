import { delay, HttpResponse, http } from 'msw'
import { describe, expect, it } from 'vitest'
import type { UpstreamClient } from '../src/index.ts'
import { basicToken, upstreamFailure, useFakeRuntime } from './support/msw.ts'

const { fake, server, client } = useFakeRuntime({ password: 'pw-for-methods-test' })
const secrets = [fake.password, basicToken(fake.username, fake.password)]

function seed() {
  const done = fake.addSession({ title: 'done', metadata: { owner: 'a' } })
  const doneMessage = fake.prompt(done.id, 'hello')
  fake.completeTurn(done.id, 'world', {
    diffs: [{ file: 'a.txt', patch: '+x', additions: 1, deletions: 0, status: 'added' }],
    todos: [{ content: 'write tests', status: 'pending', priority: 'high' }],
  })
  const asking = fake.addSession({ title: 'asking' })
  fake.prompt(asking.id, 'run bash')
  const permission = fake.askPermission(asking.id)
  const questioning = fake.addSession({ title: 'questioning' })
  fake.prompt(questioning.id, 'ask me')
  const question = fake.askQuestion(questioning.id)
  return { done, doneMessage, asking, permission, questioning, question }
}
type Seed = ReturnType<typeof seed>

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete'
interface Case {
  /** The operation name the error must carry. */
  operation: string
  /** The route to break in error tests. */
  route: [Method, string]
  call: (client: UpstreamClient, s: Seed) => Promise<unknown>
  check: (result: never, s: Seed) => void
  /** A 200 body that must fail validation; omitted where the answer has no body. */
  badBody?: unknown
}

const cases: Record<string, Case> = {
  createSession: {
    operation: 'session.create',
    route: ['post', '/session'],
    call: (c) => c.createSession({ title: 'new', agent: 'remote', metadata: { owner: 'me' } }),
    check: (session: { title: string; agent: string; metadata: unknown }) =>
      expect(session).toMatchObject({ title: 'new', agent: 'remote', metadata: { owner: 'me' } }),
    badBody: { id: 'ses_1' },
  },
  listSessions: {
    operation: 'session.list',
    route: ['get', '/session'],
    call: (c) => c.listSessions(),
    check: (sessions: { id: string }[], s) =>
      expect(sessions.map((x) => x.id)).toEqual(expect.arrayContaining([s.done.id, s.asking.id])),
    badBody: [{ id: 1 }],
  },
  getSession: {
    operation: 'session.get',
    route: ['get', '/session/:id'],
    call: (c, s) => c.getSession(s.done.id),
    check: (session: { id: string; metadata: unknown }, s) =>
      expect(session).toMatchObject({ id: s.done.id, metadata: { owner: 'a' } }),
    badBody: { title: 'no id' },
  },
  updateSessionMetadata: {
    operation: 'session.update',
    route: ['patch', '/session/:id'],
    call: (c, s) => c.updateSessionMetadata(s.done.id, { owner: 'b' }),
    check: (session: { metadata: unknown }) => expect(session.metadata).toEqual({ owner: 'b' }),
    badBody: [],
  },
  deleteSession: {
    operation: 'session.delete',
    route: ['delete', '/session/:id'],
    call: (c, s) => c.deleteSession(s.done.id),
    check: (result: { sessions: string[] }, s) => {
      expect(result.sessions).toEqual([s.done.id])
      expect(fake.state.sessions.has(s.done.id)).toBe(false)
    },
    badBody: 'yes',
  },
  forkSession: {
    operation: 'session.fork',
    route: ['post', '/session/:id/fork'],
    call: (c, s) => c.forkSession(s.done.id),
    check: (fork: { title: string; metadata: unknown }) =>
      expect(fork).toMatchObject({ title: 'done (fork #1)', metadata: { owner: 'a' } }),
    badBody: { id: 'ses_x', title: 't' },
  },
  abortSession: {
    operation: 'session.abort',
    route: ['post', '/session/:id/abort'],
    call: (c, s) => c.abortSession(s.asking.id),
    check: (result: boolean) => expect(result).toBe(true),
    badBody: { ok: true },
  },
  settleSession: {
    operation: 'session.abort',
    route: ['post', '/session/:id/abort'],
    call: (c, s) => c.settleSession(s.asking.id),
    check: (result: { permissions: string[] }, s) => expect(result.permissions).toEqual([s.permission.id]),
    badBody: 'aborted',
  },
  sessionStatus: {
    operation: 'session.status',
    route: ['get', '/session/status'],
    call: (c) => c.sessionStatus(),
    check: (status: Record<string, { type: string }>, s) => {
      expect(status[s.asking.id]).toEqual({ type: 'busy' })
      expect(status[s.done.id]).toBeUndefined()
    },
    badBody: { ses_1: { type: 'sleeping' } },
  },
  listMessages: {
    operation: 'session.messages',
    route: ['get', '/session/:id/message'],
    call: (c, s) => c.listMessages(s.done.id),
    check: (page: { messages: { info: { role: string; parentID?: string } }[] }, s) => {
      expect(page.messages.map((m) => m.info.role)).toEqual(['user', 'assistant'])
      expect(page.messages[1]?.info.parentID).toBe(s.doneMessage)
    },
    badBody: [{ info: { id: 'msg_1' }, parts: [] }],
  },
  getMessage: {
    operation: 'session.message',
    route: ['get', '/session/:id/message/:mid'],
    call: (c, s) => c.getMessage(s.done.id, s.doneMessage),
    check: (message: { info: { id: string }; parts: { type: string; text?: string }[] }, s) => {
      expect(message.info.id).toBe(s.doneMessage)
      expect(message.parts).toMatchObject([{ type: 'text', text: 'hello' }])
    },
    badBody: { info: null, parts: [] },
  },
  promptAsync: {
    operation: 'session.prompt_async',
    route: ['post', '/session/:id/prompt_async'],
    call: (c, s) =>
      c.promptAsync(s.done.id, {
        messageID: c.newMessageId(),
        agent: 'remote',
        parts: [{ type: 'text', text: 'again', metadata: { gatewayJob: 'job-1' } }],
      }),
    check: (result: undefined, s) => {
      expect(result).toBeUndefined()
      expect(fake.runningTurn(s.done.id)).toBeDefined()
    },
  },
  todos: {
    operation: 'session.todo',
    route: ['get', '/session/:id/todo'],
    call: (c, s) => c.todos(s.done.id),
    check: (todos: unknown) =>
      expect(todos).toEqual([{ content: 'write tests', status: 'pending', priority: 'high' }]),
    badBody: [{ content: 'x' }],
  },
  messageDiff: {
    operation: 'session.diff',
    route: ['get', '/session/:id/diff'],
    call: (c, s) => c.messageDiff(s.done.id, s.doneMessage),
    check: (diffs: { file: string }[]) => expect(diffs).toMatchObject([{ file: 'a.txt', additions: 1 }]),
    badBody: [{ file: 'a.txt' }],
  },
  listPermissions: {
    operation: 'permission.list',
    route: ['get', '/permission'],
    call: (c, s) => c.listPermissions(s.asking.id),
    check: (asks: { id: string }[], s) => expect(asks.map((a) => a.id)).toEqual([s.permission.id]),
    badBody: [{ id: 'per_1' }],
  },
  replyPermission: {
    operation: 'permission.reply',
    route: ['post', '/permission/:id/reply'],
    call: (c, s) => c.replyPermission(s.permission.id, 'reject', 'not now'),
    check: (result: boolean, s) => {
      expect(result).toBe(true)
      expect(fake.state.permissions.has(s.permission.id)).toBe(false)
    },
    badBody: null,
  },
  listQuestions: {
    operation: 'question.list',
    route: ['get', '/question'],
    call: (c, s) => c.listQuestions(s.questioning.id),
    check: (questions: { id: string }[], s) => expect(questions.map((q) => q.id)).toEqual([s.question.id]),
    badBody: [{ id: 'que_1', sessionID: 'ses_1' }],
  },
  replyQuestion: {
    operation: 'question.reply',
    route: ['post', '/question/:id/reply'],
    call: (c, s) => c.replyQuestion(s.question.id, [['Blue']]),
    check: (result: boolean) => expect(result).toBe(true),
    badBody: 1,
  },
  rejectQuestion: {
    operation: 'question.reject',
    route: ['post', '/question/:id/reject'],
    call: (c, s) => c.rejectQuestion(s.question.id),
    check: (result: boolean) => expect(result).toBe(true),
    badBody: 'no',
  },
  getGlobalConfig: {
    operation: 'global.config.get',
    route: ['get', '/global/config'],
    call: (c) => c.getGlobalConfig(),
    check: (config: unknown) => expect(config).toBeTypeOf('object'),
    badBody: [1, 2],
  },
  patchGlobalConfig: {
    operation: 'global.config.update',
    route: ['patch', '/global/config'],
    call: (c) => c.patchGlobalConfig({ share: 'disabled' }),
    check: (config: { share: string }) => expect(config.share).toBe('disabled'),
    badBody: 'ok',
  },
  getConfig: {
    operation: 'config.get',
    route: ['get', '/config'],
    call: (c) => c.getConfig(),
    check: (config: { model: string }) => expect(config.model).toBe('fake/fake-1'),
    badBody: null,
  },
  setAuth: {
    operation: 'auth.set',
    route: ['put', '/auth/:id'],
    call: (c) => c.setAuth('fake', { type: 'api', key: 'k-1' }),
    check: (result: boolean) => {
      expect(result).toBe(true)
      expect(fake.state.auth.get('fake')).toEqual({ type: 'api', key: 'k-1' })
    },
    badBody: {},
  },
  removeAuth: {
    operation: 'auth.remove',
    route: ['delete', '/auth/:id'],
    call: (c) => c.removeAuth('fake'),
    check: (result: boolean) => expect(result).toBe(true),
    badBody: {},
  },
  listProviders: {
    operation: 'provider.list',
    route: ['get', '/provider'],
    call: (c) => c.listProviders(),
    check: (providers: { connected: string[] }) => expect(providers.connected).toEqual(['fake']),
    badBody: { all: [] },
  },
  configuredProviders: {
    operation: 'config.providers',
    route: ['get', '/config/providers'],
    call: (c) => c.configuredProviders(),
    check: (list: { providers: { id: string }[]; default: Record<string, string> }) => {
      expect(list.providers.map((p) => p.id)).toEqual(['fake'])
      expect(list.default).toEqual({ fake: 'fake-1' })
    },
    badBody: { providers: [{ name: 'no id' }], default: {} },
  },
  listAgents: {
    operation: 'app.agents',
    route: ['get', '/agent'],
    call: (c) => c.listAgents(),
    check: (agents: { name: string }[]) => expect(agents.map((a) => a.name)).toContain('remote-full'),
    badBody: [{ name: 'x', mode: 'sideways' }],
  },
  health: {
    operation: 'global.health',
    route: ['get', '/global/health'],
    call: (c) => c.health(),
    check: (health: unknown) => expect(health).toEqual({ healthy: true, version: '1.18.33' }),
    badBody: { healthy: 'yes' },
  },
}
const table = Object.entries(cases)
const withBody = table.filter(([, c]) => 'badBody' in c)

function override([method, path]: [Method, string], resolver: () => Response | Promise<Response>): void {
  server.use(http[method](fake.url(path), resolver))
}

describe('every method against the fake runtime', () => {
  it.each(table)('%s succeeds and validates the answer', async (_name, c) => {
    const s = seed()
    c.check((await c.call(client(), s)) as never, s)
  })

  it.each(table)(
    '%s fails with 401 and no credential anywhere when the password is wrong',
    async (_name, c) => {
      const s = seed()
      const wrong = client({ password: 'not-the-password' })
      const error = await upstreamFailure(c.call(wrong, s), [
        ...secrets,
        'not-the-password',
        basicToken(fake.username, 'not-the-password'),
      ])
      expect(error).toMatchObject({ code: 'ERR_UPSTREAM_HTTP', status: 401, isRetryable: false })
    },
  )

  it.each(table)('%s maps 404 to ERR_UPSTREAM_NOT_FOUND', async (_name, c) => {
    const s = seed()
    override(c.route, () =>
      HttpResponse.json({ name: 'NotFoundError', data: { message: 'gone' } }, { status: 404 }),
    )
    const error = await upstreamFailure(c.call(client(), s), secrets)
    expect(error).toMatchObject({ code: 'ERR_UPSTREAM_NOT_FOUND', status: 404, operation: c.operation })
    expect(error.body).toContain('NotFoundError')
  })

  it.each(table)('%s maps 500 to a retryable ERR_UPSTREAM_HTTP with a truncated body', async (_name, c) => {
    const s = seed()
    override(c.route, () => new HttpResponse(`boom ${'x'.repeat(5_000)}`, { status: 500 }))
    const error = await upstreamFailure(c.call(client(), s), secrets)
    expect(error).toMatchObject({
      code: 'ERR_UPSTREAM_HTTP',
      status: 500,
      isRetryable: true,
      operation: c.operation,
    })
    expect(error.body?.startsWith('boom x')).toBe(true)
    expect(error.body?.length).toBeLessThanOrEqual(501)
  })

  it.each(table)('%s times out with ERR_UPSTREAM_TIMEOUT', async (_name, c) => {
    const s = seed()
    override(c.route, async () => {
      await delay('infinite')
      return HttpResponse.json(true)
    })
    const started = Date.now()
    const error = await upstreamFailure(c.call(client({ timeoutMs: 100 }), s), secrets)
    expect(error).toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT', status: undefined, isRetryable: true })
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it.each(table)('%s maps a network failure to ERR_UPSTREAM_NETWORK', async (_name, c) => {
    const s = seed()
    override(c.route, () => HttpResponse.error())
    const error = await upstreamFailure(c.call(client(), s), secrets)
    expect(error).toMatchObject({ code: 'ERR_UPSTREAM_NETWORK', status: undefined, isRetryable: true })
    expect(error.cause).toBeInstanceOf(Error)
  })

  it.each(withBody)('%s rejects a 200 answer that fails the schema', async (_name, c) => {
    const s = seed()
    override(c.route, () => HttpResponse.json(c.badBody as never))
    const error = await upstreamFailure(c.call(client(), s), secrets)
    expect(error).toMatchObject({
      code: 'ERR_UPSTREAM_SCHEMA',
      status: 200,
      isRetryable: false,
      operation: c.operation,
    })
  })
})

describe('credential hygiene', () => {
  it('redacts a response body that echoes the Authorization header and the password', async () => {
    const s = seed()
    server.use(
      http.get(fake.url('/session/:id'), ({ request }) =>
        HttpResponse.json(
          { error: `bad auth ${request.headers.get('authorization')} for ${fake.username}:${fake.password}` },
          { status: 502 },
        ),
      ),
    )
    const error = await upstreamFailure(client().getSession(s.done.id), secrets)
    expect(error.body).toContain('[REDACTED]')
    expect(error.message).toBe('upstream session.get failed: HTTP 502')
  })
})
