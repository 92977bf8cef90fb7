import { type HttpHandler, HttpResponse, http } from 'msw'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  BASIC_TOKEN,
  expectNoLeaks,
  type Harness,
  MARK,
  type McpSession,
  RUNTIME_PASSWORD,
  useHarness,
} from './harness.js'

// Every tool (and a resource) against a runtime that fails: 5xx, 401, a body that fails the
// schema, no answer in time, no answer at all. Each is `upstream_unavailable` with a fixed
// message; the runtime's Basic credential never shows up in a response or a log line, even
// when the runtime's error body echoes it.

const h = useHarness()
const TIMEOUT_MS = 250

interface Fixtures {
  idle: { session: string; job: string }
  running: { session: string; job: string }
  asking: { session: string; job: string; interaction: string }
}
let f: Fixtures
let slow: McpSession

beforeAll(async () => {
  const idle = await h.clients.full.ok('gateway.agent.run', {
    message: `done ${MARK.complete}`,
    waitMs: 5_000,
  })
  const running = await h.clients.full.ok('gateway.agent.run', { message: 'keeps going', waitMs: 0 })
  const asking = await h.clients.full.ok('gateway.agent.run', {
    message: `may I ${MARK.permission}`,
    waitMs: 5_000,
  })
  const interactions = asking.interactions as Array<{ interaction: string }>
  f = {
    idle: { session: String(idle.session), job: String(idle.job) },
    running: { session: String(running.session), job: String(running.job) },
    asking: {
      session: String(asking.session),
      job: String(asking.job),
      interaction: interactions[0]?.interaction ?? '',
    },
  }
  slow = await h.connect('full', { gateway: h.extraGateway({ upstream: { timeoutMs: TIMEOUT_MS } }) })
})

type Method = 'get' | 'post' | 'patch' | 'delete'
type Kind = '500' | '401' | 'schema' | 'timeout' | 'network'
interface Route {
  what: string
  tool: string
  method: Method
  path: string
  args: () => Record<string, unknown>
  /** Kinds that do not apply (a 204 route has no body to fail a schema). */
  skip?: readonly Kind[]
}

const ROUTES: Route[] = [
  {
    what: 'agent.run creating a session',
    tool: 'gateway.agent.run',
    method: 'post',
    path: '/session',
    args: () => ({ message: 'x' }),
  },
  {
    what: 'agent.run prompting',
    tool: 'gateway.agent.run',
    method: 'post',
    path: '/session/:id/prompt_async',
    args: () => ({ message: 'x' }),
    skip: ['schema'],
  },
  {
    what: 'agent.run reading a resumed session’s status',
    tool: 'gateway.agent.run',
    method: 'get',
    path: '/session/status',
    args: () => ({ message: 'x', session: f.idle.session }),
  },
  {
    what: 'job.get reading messages',
    tool: 'gateway.job.get',
    method: 'get',
    path: '/session/:id/message',
    args: () => ({ job: f.idle.job }),
  },
  // No row for the diff endpoint: a finished run's changed files come with its messages (the
  // runtime keeps them on the user message and answers that endpoint from there), so no tool
  // reads it unless the record is malformed (`jobs/turn-reads.test.ts` covers that fallback).
  {
    what: 'job.get reading asks',
    tool: 'gateway.job.get',
    method: 'get',
    path: '/question',
    args: () => ({ job: f.asking.job }),
  },
  {
    what: 'job.cancel aborting',
    tool: 'gateway.job.cancel',
    method: 'post',
    path: '/session/:id/abort',
    args: () => ({ job: f.running.job }),
  },
  {
    what: 'session.list listing',
    tool: 'gateway.session.list',
    method: 'get',
    path: '/session',
    args: () => ({}),
  },
  {
    what: 'session.get loading the session',
    tool: 'gateway.session.get',
    method: 'get',
    path: '/session/:id',
    args: () => ({ session: f.idle.session }),
  },
  {
    what: 'session.get reading todos',
    tool: 'gateway.session.get',
    method: 'get',
    path: '/session/:id/todo',
    args: () => ({ session: f.idle.session, include: ['todos'] }),
  },
  {
    what: 'session.fork forking',
    tool: 'gateway.session.fork',
    method: 'post',
    path: '/session/:id/fork',
    args: () => ({ session: f.idle.session }),
  },
  {
    what: 'session.fork signing the fork',
    tool: 'gateway.session.fork',
    method: 'patch',
    path: '/session/:id',
    args: () => ({ session: f.idle.session }),
  },
  {
    what: 'session.delete deleting',
    tool: 'gateway.session.delete',
    method: 'delete',
    path: '/session/:id',
    args: () => ({ session: f.idle.session }),
  },
  {
    what: 'interaction.respond listing asks',
    tool: 'gateway.interaction.respond',
    method: 'get',
    path: '/permission',
    args: () => ({ interaction: f.asking.interaction, decision: 'reject' }),
  },
  {
    what: 'interaction.respond replying',
    tool: 'gateway.interaction.respond',
    method: 'post',
    path: '/permission/:id/reply',
    args: () => ({ interaction: f.asking.interaction, decision: 'reject' }),
  },
]

/** A runtime error body that echoes the credential it received, to prove it goes nowhere. */
const echoBody = (request: Request) =>
  `upstream exploded; auth was ${request.headers.get('authorization')} password ${RUNTIME_PASSWORD}`

function failing(kind: Kind, route: Route): HttpHandler {
  return http[route.method](h.fake.url(route.path), async ({ request }) => {
    switch (kind) {
      case '500':
        return new HttpResponse(echoBody(request), { status: 500 })
      case '401':
        return new HttpResponse(echoBody(request), { status: 401, headers: { 'www-authenticate': 'Basic' } })
      case 'schema':
        return HttpResponse.json({ surprise: [echoBody(request)], id: 42 })
      case 'network':
        return HttpResponse.error()
      case 'timeout':
        // Never answers; ends when the client gives up.
        await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve()))
        return HttpResponse.error()
    }
  })
}

const KINDS: readonly Kind[] = ['500', '401', 'schema', 'network', 'timeout']
const MESSAGES: Record<Kind, string> = {
  '500': 'The agent runtime could not complete the request.',
  '401': 'The agent runtime could not complete the request.',
  schema: 'The agent runtime returned an unexpected response.',
  network: 'The agent runtime is not reachable.',
  timeout: 'The agent runtime did not answer in time.',
}
// Timeouts cost TIMEOUT_MS each: one route per tool is enough to show the mapping.
const timeoutRoutes = new Set(ROUTES.filter((r, i) => ROUTES.findIndex((o) => o.tool === r.tool) === i))
const cases = ROUTES.flatMap((route) =>
  KINDS.filter((k) => !route.skip?.includes(k))
    .filter((k) => k !== 'timeout' || timeoutRoutes.has(route))
    .map((kind) => [route.what, kind, route] as const),
)

async function withOverride<T>(harness: Harness, handler: HttpHandler, fn: () => Promise<T>): Promise<T> {
  harness.server.use(handler)
  try {
    return await fn()
  } finally {
    harness.server.resetHandlers()
  }
}

describe('runtime failures become upstream_unavailable', () => {
  it.each(cases)('%s: %s → upstream_unavailable', async (_what, kind, route) => {
    const client = kind === 'timeout' ? slow : h.clients.full
    const out = await withOverride(h, failing(kind, route), () => client.call(route.tool, route.args()))
    expect(out).toMatchObject({
      kind: 'result',
      isError: true,
      error: { code: 'upstream_unavailable', message: MESSAGES[kind] },
    })
    expect(JSON.stringify(out)).not.toMatch(/exploded|surprise|ses_|msg_|per_/)
  })

  it('logs the failure by class, code and status only', async () => {
    const route = ROUTES.find((r) => r.tool === 'gateway.session.list') as Route
    const before = h.logs.lines().length
    await withOverride(h, failing('500', route), () => h.clients.full.call(route.tool, route.args()))
    const lines = h.logs.lines().slice(before)
    expect(lines).toContainEqual(
      expect.objectContaining({
        event: 'tool_error',
        tool: 'gateway.session.list',
        code: 'upstream_unavailable',
        causeName: 'UpstreamError',
        causeCode: 'ERR_UPSTREAM_HTTP',
        causeStatus: 500,
      }),
    )
    expect(lines).toContainEqual(
      expect.objectContaining({
        event: 'audit',
        tool: 'gateway.session.list',
        outcome: 'error',
        errorCode: 'upstream_unavailable',
      }),
    )
  })

  it('deletes a half-created session whose ownership record cannot be written', async () => {
    const sessions = h.fake.state.sessions.size
    const mark = h.fake.requests.length
    const patch = http.patch(h.fake.url('/session/:id'), () => new HttpResponse('no', { status: 500 }))
    const out = await withOverride(h, patch, () =>
      h.clients.chat.call('gateway.agent.run', { message: 'orphan?' }),
    )
    expect(out).toMatchObject({ error: { code: 'upstream_unavailable' } })
    expect(h.fake.state.sessions.size).toBe(sessions)
    const calls = h.requestsSince(mark).map((r) => `${r.method} ${r.path.replace(/ses_\w+/, ':id')}`)
    expect(calls).toContain('DELETE /session/:id')
    expect(calls).not.toContain('POST /session/:id/prompt_async')
  })

  it('deletes a half-created fork whose ownership record cannot be written', async () => {
    const sessions = new Set(h.fake.state.sessions.keys())
    const patch = http.patch(h.fake.url('/session/:id'), () => new HttpResponse('no', { status: 500 }))
    const out = await withOverride(h, patch, () =>
      h.clients.full.call('gateway.session.fork', { session: f.idle.session }),
    )
    expect(out).toMatchObject({ error: { code: 'upstream_unavailable' } })
    // Like agent.run's half-created session: an unsigned copy of the conversation that no
    // credential can ever reach again must not stay behind in the runtime.
    const left = [...h.fake.state.sessions.keys()].filter((id) => !sessions.has(id))
    expect(left).toEqual([])
  })

  it('leaves the job running when the abort fails', async () => {
    const route = ROUTES.find((r) => r.what === 'job.cancel aborting') as Route
    await withOverride(h, failing('500', route), () => h.clients.full.call(route.tool, route.args()))
    expect((await h.clients.full.ok('gateway.job.get', { job: f.running.job })).status).toBe('running')
  })

  it('keeps the permission pending when the reply fails', async () => {
    const route = ROUTES.find((r) => r.what === 'interaction.respond replying') as Route
    await withOverride(h, failing('500', route), () => h.clients.full.call(route.tool, route.args()))
    const status = await h.clients.full.ok('gateway.job.get', { job: f.asking.job })
    expect(status.status).toBe('input_required')
  })

  it('answers a resource read against a failing runtime with an upstream_unavailable error', async () => {
    const todo = http.get(h.fake.url('/session/:id/todo'), () => new HttpResponse('down', { status: 503 }))
    const own = await withOverride(h, todo, () =>
      h.clients.full.read(`gateway://sessions/${f.idle.session}/todos`),
    )
    expect(own).toMatchObject({ ok: false, error: { code: -32602, data: { code: 'upstream_unavailable' } } })
  })
})

describe('a gateway configured with the wrong runtime password', () => {
  it('answers upstream_unavailable and never shows either password', async () => {
    const wrong = 'wrong-pa55word-for-the-runtime'
    const client = await h.connect('read', { gateway: h.extraGateway({ upstream: { password: wrong } }) })
    const mark = h.fake.requests.length
    for (const [tool, args] of [
      ['gateway.session.list', {}],
      ['gateway.agent.run', { message: 'hello' }],
    ] as const) {
      expect(await client.errorCode(tool, args)).toBe('upstream_unavailable')
    }
    const seen = h.fake.requests.slice(mark)
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.every((r) => !r.authorized)).toBe(true)
    const all = h.bodies.join('\n') + h.logs.raw()
    expect(all).not.toContain(wrong)
    expect(all).not.toContain(Buffer.from(`opencode:${wrong}`).toString('base64'))
    await client.close()
  })
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expect(h.logs.raw()).toContain('tool_error')
    expect(h.logs.raw()).not.toContain(BASIC_TOKEN)
    expectNoLeaks(h)
  })
})

describe('a runtime too busy to answer in time (transient failures)', () => {
  /** Never answers; ends when the client gives up. */
  const hang = (request: Request) =>
    new Promise<Response>((resolve) =>
      request.signal.addEventListener('abort', () => resolve(HttpResponse.error() as unknown as Response)),
    )

  it('a prompt the runtime took but answered too late is a started job, not a failure', async () => {
    const prompt = http.post(h.fake.url('/session/:id/prompt_async'), async ({ request, params }) => {
      const input = (await request.clone().json()) as {
        messageID: string
        agent: string
        parts: Array<{ text: string }>
      }
      // The runtime takes the prompt, then its answer is lost.
      h.fake.prompt(String(params.id), input.parts[0]?.text ?? '', {
        messageID: input.messageID,
        agent: input.agent,
      })
      return hang(request)
    })
    const out = await withOverride(h, prompt, () =>
      slow.call('gateway.agent.run', { message: `late answer ${MARK.complete}`, waitMs: 0 }),
    )
    expect(out).toMatchObject({ kind: 'result', isError: false })
    const job = (out as unknown as { structured: { job: string } }).structured.job
    const done = await h.clients.full.ok('gateway.job.get', { job, waitMs: 5_000 })
    expect(done).toMatchObject({ status: 'completed', text: expect.stringContaining('late answer') })
  })

  it('a prompt the runtime never took stays a failure (nothing is reported as started)', async () => {
    const prompt = http.post(h.fake.url('/session/:id/prompt_async'), ({ request }) => hang(request))
    const out = await withOverride(h, prompt, () =>
      slow.call('gateway.agent.run', { message: 'never taken' }),
    )
    expect(out).toMatchObject({ isError: true, error: { code: 'upstream_unavailable' } })
  })

  it('a wait rides out reads that get no answer (twice in a row) and reports the true end', async () => {
    const run = await slow.call('gateway.agent.run', { message: 'slow to answer', waitMs: 0 })
    const { job, session } = (run as unknown as { structured: { job: string; session: string } }).structured
    expect(run).toMatchObject({ isError: false, structured: { status: 'running' } })
    const [sessionId] = [...h.fake.state.sessions.keys()]
      .filter((id) => h.fake.runningTurn(id) !== undefined)
      .slice(-1)
    // The next two message reads (a read and its own retry) get no answer at all.
    h.server.use(
      http.get(h.fake.url('/session/:id/message'), ({ request }) => hang(request), { once: true }),
      http.get(h.fake.url('/session/:id/message'), ({ request }) => hang(request), { once: true }),
    )
    try {
      const waiting = slow.call('gateway.job.get', { job, waitMs: 10_000 })
      setTimeout(() => h.fake.completeTurn(sessionId as string, 'finally done'), 1_500)
      const out = await waiting
      expect(out).toMatchObject({ isError: false, structured: { status: 'completed', text: 'finally done' } })
    } finally {
      h.server.resetHandlers()
    }
    expect(session).toMatch(/^v1\./)
  })
})
