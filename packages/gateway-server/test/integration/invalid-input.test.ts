import { describe, expect, it } from 'vitest'
import { type CallOutcome, expectNoLeaks, MARK, useHarness, type Who } from './harness.js'

// Invalid tool input at the bounds of the spec's Limits table and DESIGN.md's tool surface.
//
// Left to itself the SDK (@modelcontextprotocol/server 2.4.0) answers input that fails a tool's
// schema with its own untyped text ("Input validation error: …"). The gateway advertises the
// strict schema but validates inside its tool wrapper, so every such input gets the DESIGN body
// `{ error: { code: 'invalid_input', message } }` with `isError: true`, before any tool code
// runs: the runtime sees nothing and nothing is screened. The tests below pin that this answer is
// the same for every tool and every policy, and that the values just inside each bound pass.

const h = useHarness()

const x = (n: number) => 'x'.repeat(n)
const H = 'v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'

type Case = readonly [tool: string, what: string, args: Record<string, unknown>]
const INVALID: Case[] = [
  ['gateway.agent.run', 'an empty message (0 characters)', { message: '' }],
  ['gateway.agent.run', 'a message of 32001 characters', { message: x(32_001) }],
  ['gateway.agent.run', 'no message', {}],
  ['gateway.agent.run', 'a message that is not a string', { message: 42 }],
  ['gateway.agent.run', 'an empty title', { message: 'hi', title: '' }],
  ['gateway.agent.run', 'a title of 161 characters', { message: 'hi', title: x(161) }],
  ['gateway.agent.run', 'waitMs -1', { message: 'hi', waitMs: -1 }],
  ['gateway.agent.run', 'waitMs 30001', { message: 'hi', waitMs: 30_001 }],
  ['gateway.agent.run', 'a fractional waitMs', { message: 'hi', waitMs: 1.5 }],
  ['gateway.agent.run', 'waitMs as a string', { message: 'hi', waitMs: '100' }],
  ['gateway.agent.run', 'an empty session handle', { message: 'hi', session: '' }],
  ['gateway.agent.run', 'a session handle of 4097 characters', { message: 'hi', session: `v1.${x(4094)}` }],
  ['gateway.agent.run', 'an agent chosen by the client', { message: 'hi', agent: 'build' }],
  ['gateway.agent.run', 'a directory chosen by the client', { message: 'hi', directory: '/etc' }],
  ['gateway.job.get', 'no job', {}],
  ['gateway.job.get', 'an empty job handle', { job: '' }],
  ['gateway.job.get', 'waitMs -1', { job: H, waitMs: -1 }],
  ['gateway.job.get', 'waitMs 30001', { job: H, waitMs: 30_001 }],
  ['gateway.job.cancel', 'no job', {}],
  ['gateway.job.cancel', 'an unknown extra field', { job: H, force: true }],
  ['gateway.session.list', 'limit 0', { limit: 0 }],
  ['gateway.session.list', 'limit 101', { limit: 101 }],
  ['gateway.session.list', 'a fractional limit', { limit: 2.5 }],
  ['gateway.session.list', 'an empty cursor', { cursor: '' }],
  ['gateway.session.list', 'a cursor of 201 characters', { cursor: x(201) }],
  ['gateway.session.get', 'no session', {}],
  ['gateway.session.get', 'an unknown view', { session: H, include: ['files'] }],
  ['gateway.session.get', 'four views', { session: H, include: ['messages', 'diff', 'todos', 'todos'] }],
  ['gateway.session.get', 'include as a string', { session: H, include: 'messages' }],
  ['gateway.session.fork', 'no session', {}],
  ['gateway.session.fork', 'an empty message handle', { session: H, message: '' }],
  ['gateway.session.delete', 'no session', {}],
  ['gateway.workspace.search', 'an unknown mode', { mode: 'regex', query: 'a' }],
  ['gateway.workspace.search', 'an empty query', { mode: 'text', query: '' }],
  ['gateway.workspace.search', 'a query of 501 characters', { mode: 'text', query: x(501) }],
  ['gateway.workspace.search', 'limit 0', { mode: 'files', query: 'a', limit: 0 }],
  ['gateway.workspace.search', 'limit 101', { mode: 'files', query: 'a', limit: 101 }],
  ['gateway.workspace.read', 'an empty path', { path: '' }],
  ['gateway.workspace.read', 'a path of 1025 characters', { path: x(1025) }],
  ['gateway.interaction.respond', 'no interaction', { decision: 'reject' }],
  ['gateway.interaction.respond', 'an unknown decision', { interaction: H, decision: 'approve' }],
  [
    'gateway.interaction.respond',
    '21 answer arrays',
    { interaction: H, answers: Array.from({ length: 21 }, () => ['a']) },
  ],
  [
    'gateway.interaction.respond',
    'an answer array of 21 labels',
    { interaction: H, answers: [Array.from({ length: 21 }, () => 'a')] },
  ],
  ['gateway.interaction.respond', 'an empty answer', { interaction: H, answers: [['']] }],
  ['gateway.interaction.respond', 'an answer of 2001 characters', { interaction: H, answers: [[x(2001)]] }],
  ['gateway.interaction.respond', 'answers that are not arrays', { interaction: H, answers: ['Blue'] }],
  ['gateway.interaction.respond', 'an empty note', { interaction: H, decision: 'reject', message: '' }],
  [
    'gateway.interaction.respond',
    'a note of 1001 characters',
    { interaction: H, decision: 'reject', message: x(1001) },
  ],
  ['gateway.catalog.get', 'any argument', { verbose: true }],
]

const CHAT_TOOLS = new Set([
  'gateway.agent.run',
  'gateway.job.get',
  'gateway.job.cancel',
  'gateway.session.list',
  'gateway.session.get',
  'gateway.interaction.respond',
  'gateway.catalog.get',
])
const READ_TOOLS = new Set([...CHAT_TOOLS, 'gateway.workspace.search', 'gateway.workspace.read'])
// Every row for full; for read and chat the first row of each tool they have, to show the
// answer does not depend on the policy.
const firstPerTool = INVALID.filter(([tool], i) => INVALID.findIndex(([t]) => t === tool) === i)
const byPolicy: Array<readonly [Who, string, string, Record<string, unknown>]> = [
  ...INVALID.map(([tool, what, args]) => ['full', tool, what, args] as const),
  ...firstPerTool
    .filter(([tool]) => READ_TOOLS.has(tool))
    .map(([tool, what, args]) => ['read', tool, what, args] as const),
  ...firstPerTool
    .filter(([tool]) => CHAT_TOOLS.has(tool))
    .map(([tool, what, args]) => ['chat', tool, what, args] as const),
]

/** What the full client got for each INVALID row, for the DESIGN-body check below. */
const fullOutcomes = new Map<string, CallOutcome>()

describe('schema-invalid input', () => {
  it.each(byPolicy)(
    '%s: %s with %s → an invalid_input error result; runtime untouched',
    async (who, tool, what, args) => {
      const mark = h.fake.requests.length
      const seen = h.screened.length
      const out = await h.clients[who].call(tool, args)
      if (who === 'full') fullOutcomes.set(`${tool}: ${what}`, out)
      expect(out.kind).toBe('result')
      if (out.kind !== 'result') return
      expect(out.isError).toBe(true)
      expect(out.structured).toBeUndefined()
      expect(out.error?.code).toBe('invalid_input')
      expect(out.error?.message).toMatch(/^Invalid arguments: /)
      expect(out.text).not.toContain(x(200))
      expect(h.requestsSince(mark)).toEqual([])
      expect(h.screened.length).toBe(seen)
    },
  )

  it('answers every schema-invalid input above with the DESIGN error body and code invalid_input', () => {
    // DESIGN.md "Errors": tool failures are isError results with `{ error: { code, message } }`
    // and stable codes, invalid_input among them; clients branch on the code, not on SDK prose.
    expect(fullOutcomes.size).toBe(INVALID.length)
    const wrong = [...fullOutcomes]
      .filter(([, out]) => out.kind !== 'result' || !out.isError || out.error?.code !== 'invalid_input')
      .map(([name]) => name)
    expect(wrong).toEqual([])
  })

  it.each([
    ['a schema-invalid call (isError result)', 'gateway.agent.run', { message: '' }],
    ['a call of a hidden tool (JSON-RPC error)', 'gateway.workspace.read', { path: 'README.md' }],
  ])('records %s as refused in its audit line', async (_what, tool, args) => {
    // One audit line per tool call with its true outcome: both are refused before any tool runs.
    const before = h.logs.lines().length
    await h.clients.chat.call(tool, args)
    const audit = h.logs
      .lines()
      .slice(before)
      .filter((l) => l.event === 'audit' && l.rpcMethod === 'tools/call')
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({
      username: 'discord',
      tool,
      outcome: 'refused',
      errorCode: tool === 'gateway.agent.run' ? 'invalid_input' : 'unknown_tool',
    })
  })
})

describe('values just inside the bounds are accepted', () => {
  it('accepts a message of exactly 32000 characters and a title of 160', async () => {
    const out = await h.clients.chat.ok('gateway.agent.run', { message: x(32_000), title: x(160), waitMs: 0 })
    expect(out.status).toBe('running')
    const sid = await h.sessionId('chat', String(out.session))
    expect(h.fake.state.sessions.get(sid)?.title).toBe(x(160))
    const user = h.fake.state.messages.get(sid)?.find((m) => m.info.role === 'user')
    expect(user?.parts.find((p) => p.type === 'text')).toMatchObject({ text: x(32_000) })
  })

  it('accepts a message of one character', async () => {
    expect((await h.clients.read.ok('gateway.agent.run', { message: '?', waitMs: 0 })).status).toBe('running')
  })

  it('accepts waitMs 0 and 30000 (an ended job answers at once)', async () => {
    const done = await h.clients.full.ok('gateway.agent.run', {
      message: `quick ${MARK.complete}`,
      waitMs: 5_000,
    })
    expect(done.status).toBe('completed')
    const started = performance.now()
    expect((await h.clients.full.ok('gateway.job.get', { job: done.job, waitMs: 30_000 })).status).toBe(
      'completed',
    )
    expect((await h.clients.full.ok('gateway.job.get', { job: done.job, waitMs: 0 })).status).toBe(
      'completed',
    )
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  it('lets 20 answer arrays of 20 answers of 2000 characters through the schema', async () => {
    const asked = await h.clients.chat.ok('gateway.agent.run', {
      message: `q ${MARK.question}`,
      waitMs: 5_000,
    })
    const interaction = (asked.interactions as Array<{ interaction: string }>)[0]?.interaction
    const answers = Array.from({ length: 20 }, () => Array.from({ length: 20 }, () => x(2000)))
    // Past the schema, the gateway's own check: one answer array per question (here one).
    const out = await h.clients.chat.call('gateway.interaction.respond', { interaction, answers })
    expect(out).toMatchObject({
      kind: 'result',
      isError: true,
      error: { code: 'invalid_input', message: 'Give one answer array per question (1).' },
    })
  })

  it('accepts a permission note of exactly 1000 characters', async () => {
    const asked = await h.clients.read.ok('gateway.agent.run', {
      message: `p ${MARK.permission}`,
      waitMs: 5_000,
    })
    const interaction = (asked.interactions as Array<{ interaction: string }>)[0]?.interaction
    expect(
      await h.clients.read.ok('gateway.interaction.respond', {
        interaction,
        decision: 'reject',
        message: x(1000),
      }),
    ).toEqual({ accepted: true, kind: 'permission' })
  })

  it('accepts a search query of 500 characters and a read path of 1024', async () => {
    expect(
      await h.clients.read.ok('gateway.workspace.search', { mode: 'files', query: x(500), limit: 100 }),
    ).toEqual({
      matches: [],
      truncated: false,
    })
    const deep = `${'a/'.repeat(511)}bb`
    expect(deep).toHaveLength(1024)
    expect(await h.clients.read.errorCode('gateway.workspace.read', { path: deep })).toBe('not_found')
  })
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expectNoLeaks(h)
  })
})
