import { describe, expect, it } from 'vitest'
import { BLOCKED_WORD, expectNoLeaks, MARK, tamper, UNAVAILABLE_WORD, useHarness } from './harness.js'
import { callRaw, errorOf, type Round, roundHelpers } from './rounds-helpers.js'

// What the retry of an input_required round must bring (MCP 2026-07-28), against the fake
// runtime: a state that is the credential's own, for this very call, not expired, not replayed;
// answers that a form of ours could give, screened like gateway.interaction.respond; and never a
// second run.

const h = useHarness()
const { replies, lastReply, roundOf, auditLines } = roundHelpers(h)

describe('what a retry must bring', () => {
  const answer = { 'q1.1': { action: 'accept', content: { answer: 'Blue' } } }

  it.each([
    ['tampered', (s: string) => tamper(s), 'not_found'],
    ['cut short', (s: string) => s.slice(0, 40), 'not_found'],
    ['not a handle at all', () => 'ses_123', 'handle_invalid'],
  ] as const)('refuses a %s requestState like a bad handle, and applies nothing', async (_, mangle, code) => {
    const { client, args, round } = await roundOf('full', MARK.question)
    const mark = h.fake.requests.length
    const turns = h.turns.length
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: mangle(round.requestState),
      inputResponses: answer,
    })
    expect(errorOf(out)).toBe(code)
    expect(replies(mark)).toEqual([])
    // And a retry of agent.run never starts another run.
    expect(h.turns.length).toBe(turns)
  })

  it("refuses another credential's requestState", async () => {
    const { args, round } = await roundOf('chat', MARK.question)
    const other = await h.connect('chat2', { manual: true })
    const mark = h.fake.requests.length
    const out = await callRaw(other.client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: answer,
    })
    expect(errorOf(out)).toBe('not_found')
    expect(replies(mark)).toEqual([])
  })

  it('refuses a requestState echoed with other arguments or to another tool', async () => {
    const { client, args, round } = await roundOf('full', MARK.question)
    const mark = h.fake.requests.length
    const retry = { requestState: round.requestState, inputResponses: answer }
    expect(errorOf(await callRaw(client, 'gateway.agent.run', { ...args, waitMs: 30_000 }, retry))).toBe(
      'not_found',
    )
    expect(errorOf(await callRaw(client, 'gateway.agent.run', { ...args, message: 'other' }, retry))).toBe(
      'not_found',
    )
    const job = await h.seal('job', 'full', { s: 'ses_x', m: 'msg_x', t: 0 })
    expect(errorOf(await callRaw(client, 'gateway.job.get', { job, waitMs: 5_000 }, retry))).toBe('not_found')
    expect(replies(mark)).toEqual([])
  })

  it('refuses an expired requestState', async () => {
    let now = Date.now()
    const gateway = h.extraGateway({ gateway: { now: () => now } })
    const client = (await h.connect('full', { gateway, manual: true })).client
    const args = { message: MARK.question, waitMs: 5_000 }
    const round = (await callRaw(client, 'gateway.agent.run', args)) as unknown as Round
    now += 15 * 60_000
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: answer,
    })
    expect(errorOf(out)).toBe('handle_expired')
  })

  it('refuses a replayed round: answered once, never again', async () => {
    const { client, args, round } = await roundOf('full', MARK.question, 300)
    const retry = { requestState: round.requestState, inputResponses: answer }
    const first = await callRaw(client, 'gateway.agent.run', args, retry)
    expect(errorOf(first)).toBeUndefined()
    const mark = h.fake.requests.length
    const again = await callRaw(client, 'gateway.agent.run', args, retry)
    expect(errorOf(again)).toBe('not_pending')
    expect(replies(mark)).toEqual([])
  })

  it('refuses answers without the requestState of their round, and starts no run', async () => {
    const manual = await h.connect('full', { manual: true })
    const turns = h.turns.length
    const out = await manual.client.callTool(
      {
        name: 'gateway.agent.run',
        arguments: { message: 'x', waitMs: 100 },
        inputResponses: answer,
      } as never,
      { allowInputRequired: true } as never,
    )
    expect(errorOf(out as Record<string, unknown>)).toBe('invalid_input')
    expect(h.turns.length).toBe(turns)
  })

  it.each([
    ['an answer that is not an option', { answer: 'Purple' }],
    ['an unknown field', { answer: 'Blue', extra: 'x' }],
    ['a typed answer that is too long', { custom: 'x'.repeat(2001) }],
  ])('refuses %s and applies nothing', async (_, content) => {
    const { client, args, round } = await roundOf('full', MARK.question)
    const mark = h.fake.requests.length
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: { 'q1.1': { action: 'accept', content } },
    })
    expect(errorOf(out)).toBe('invalid_input')
    expect(replies(mark)).toEqual([])
  })

  it.each([
    [BLOCKED_WORD, 'blocked_by_moderation'],
    [UNAVAILABLE_WORD, 'moderator_unavailable'],
  ])('screens answers like interaction.respond: %s → %s, nothing sent', async (word, code) => {
    const { client, args, round } = await roundOf('full', MARK.question)
    const mark = h.fake.requests.length
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: { 'q1.1': { action: 'accept', content: { custom: `say ${word}` } } },
    })
    expect(errorOf(out)).toBe(code)
    expect(replies(mark)).toEqual([])
    expect(auditLines().at(-1)?.screening).toBe(code === 'blocked_by_moderation' ? 'blocked' : 'unavailable')
  })

  it('serves the retry from another gateway that shares only the secret', async () => {
    const { args, round } = await roundOf('full', MARK.question, 300)
    const other = h.extraGateway({})
    const client = (await h.connect('full', { gateway: other, manual: true })).client
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: answer,
    })
    expect(errorOf(out)).toBeUndefined()
    expect(lastReply('question.replied').answers).toEqual([['Blue']])
  })
})

describe('a retry that must not count as a fresh call', () => {
  const answer = { 'q1.1': { action: 'accept', content: { answer: 'Blue' } } }

  it('refuses requestState and answers on a 2025-era request: no second run', async () => {
    const { args, round } = await roundOf('full', MARK.question)
    const legacy = await h.connect('full', { mode: 'legacy' })
    const turns = h.turns.length
    const mark = h.fake.requests.length
    const out = await callRaw(legacy.client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: answer,
    })
    expect(errorOf(out)).toBe('invalid_input')
    expect(h.turns.length).toBe(turns)
    expect(replies(mark)).toEqual([])
  })

  it('refuses requestState and answers on a tool that takes no rounds', async () => {
    const { client, round } = await roundOf('full', MARK.question)
    const out = await callRaw(
      client,
      'gateway.session.list',
      {},
      { requestState: round.requestState, inputResponses: answer },
    )
    expect(errorOf(out)).toBe('invalid_input')
  })

  it('refuses a retry that answers none of its forms (a state replayed alone)', async () => {
    const { client, args, round } = await roundOf('full', MARK.question)
    const mark = h.fake.requests.length
    expect(
      errorOf(await callRaw(client, 'gateway.agent.run', args, { requestState: round.requestState })),
    ).toBe('invalid_input')
    const other = { 'q9.1': { action: 'accept', content: { answer: 'Blue' } } }
    expect(
      errorOf(
        await callRaw(client, 'gateway.agent.run', args, {
          requestState: round.requestState,
          inputResponses: other,
        }),
      ),
    ).toBe('invalid_input')
    expect(replies(mark)).toEqual([])
  })

  it('gives no new round to a retry that moved nothing, however often its state is replayed', async () => {
    const { client, args, round } = await roundOf('full', MARK.question)
    const empty = { 'q1.1': { action: 'accept', content: {} } }
    for (let i = 0; i < 3; i++) {
      const out = await callRaw(
        client,
        'gateway.agent.run',
        { ...args },
        {
          requestState: round.requestState,
          inputResponses: empty,
        },
      )
      expect(out.resultType).not.toBe('input_required')
      expect((out.structuredContent as { status: string }).status).toBe('input_required')
    }
  })

  it('refuses answers in a wrapped shape (the SDK drops them) instead of asking again', async () => {
    const { client, args, round } = await roundOf('full', MARK.question)
    const wrapped = {
      'q1.1': { method: 'elicitation/create', result: { action: 'accept', content: { answer: 'Blue' } } },
    }
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: wrapped,
    })
    expect(errorOf(out)).toBe('invalid_input')
  })
})

describe('when the job moves on between rounds', () => {
  const answer = { 'q1.1': { action: 'accept', content: { answer: 'Blue' } } }

  it('a job cancelled meanwhile: the answer is not_pending and nothing is sent', async () => {
    const { client, args, round } = await roundOf('full', MARK.question, 300)
    const state = await h.open('request_state', 'full', round.requestState)
    const job = await h.seal('job', 'full', { s: state.s, m: state.m, t: state.t })
    expect(errorOf(await callRaw(client, 'gateway.job.cancel', { job }))).toBeUndefined()
    const mark = h.fake.requests.length
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: answer,
    })
    expect(errorOf(out)).toBe('not_pending')
    expect(replies(mark)).toEqual([])
  })

  it('a session deleted meanwhile: not_found', async () => {
    const { client, args, round } = await roundOf('full', MARK.question, 300)
    const state = await h.open('request_state', 'full', round.requestState)
    const session = await h.seal('session', 'full', { s: state.s })
    expect(errorOf(await callRaw(client, 'gateway.session.delete', { session }))).toBeUndefined()
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: answer,
    })
    expect(errorOf(out)).toBe('not_found')
    expect(auditLines().at(-1)).toMatchObject({ inputRound: 1, errorCode: 'not_found' })
  })

  it('an ask answered elsewhere after the check: the other answers still go, the call says not_pending', async () => {
    const manual = await h.connect('full', { manual: true })
    const started = await callRaw(manual.client, 'gateway.agent.run', { message: 'two asks', waitMs: 0 })
    const sid = await h.sessionId('full', String((started.structuredContent as { session: string }).session))
    const first = h.fake.askQuestion(sid)
    const second = h.fake.askQuestion(sid)
    const job = (started.structuredContent as { job: string }).job
    const round = (await callRaw(manual.client, 'gateway.job.get', {
      job,
      waitMs: 5_000,
    })) as unknown as Round
    expect(Object.keys(round.inputRequests)).toEqual(['q1.1', 'q2.1'])
    // The second question goes away just before its reply reaches the runtime.
    const racer = ({ request }: { request: Request }) => {
      if (new URL(request.url).pathname === `/question/${first.id}/reply`)
        h.fake.state.questions.delete(second.id)
    }
    h.server.events.on('response:mocked', racer)
    const out = await callRaw(
      manual.client,
      'gateway.job.get',
      { job, waitMs: 5_000 },
      {
        requestState: round.requestState,
        inputResponses: {
          'q1.1': { action: 'accept', content: { answer: 'Blue' } },
          'q2.1': { action: 'accept', content: { answer: 'Red' } },
        },
      },
    )
    h.server.events.removeListener('response:mocked', racer)
    expect(errorOf(out)).toBe('not_pending')
    expect(lastReply('question.replied')).toMatchObject({ requestID: first.id, answers: [['Blue']] })
    expect(auditLines().at(-1)).toMatchObject({ inputRound: 1, inputAnswered: 1, inputDeclined: 0 })
  })
})

describe('the order answers go out in', () => {
  it('answers first, rejections last; a rejected ask already gone is no error', async () => {
    const manual = await h.connect('full', { manual: true })
    const started = await callRaw(manual.client, 'gateway.agent.run', { message: 'three asks', waitMs: 0 })
    const { session, job } = started.structuredContent as { session: string; job: string }
    const sid = await h.sessionId('full', session)
    const first = h.fake.askPermission(sid)
    const question = h.fake.askQuestion(sid)
    const last = h.fake.askPermission(sid, { patterns: ['echo bye'] })
    const round = (await callRaw(manual.client, 'gateway.job.get', {
      job,
      waitMs: 5_000,
    })) as unknown as Round
    expect(Object.keys(round.inputRequests)).toEqual(['q1.1', 'p2', 'p3'])
    // Rejecting the first permission ends the turn and the runtime drops the other asks.
    const racer = ({ request }: { request: Request }) => {
      if (new URL(request.url).pathname === `/permission/${first.id}/reply`)
        h.fake.state.permissions.delete(last.id)
    }
    h.server.events.on('response:mocked', racer)
    const mark = h.fake.requests.length
    const out = await callRaw(
      manual.client,
      'gateway.job.get',
      { job, waitMs: 5_000 },
      {
        requestState: round.requestState,
        inputResponses: {
          'q1.1': { action: 'accept', content: { answer: 'Red' } },
          p2: { action: 'decline' },
          p3: { action: 'accept', content: { decision: 'reject' } },
        },
      },
    )
    h.server.events.removeListener('response:mocked', racer)
    expect(errorOf(out)).toBeUndefined()
    expect(replies(mark).map((r) => r.path)).toEqual([
      `/question/${question.id}/reply`,
      `/permission/${first.id}/reply`,
      `/permission/${last.id}/reply`,
    ])
    expect(auditLines().at(-1)).toMatchObject({ inputRound: 1, inputAnswered: 1, inputDeclined: 1 })
  })

  it('refuses inputResponses that are not a map of form results', async () => {
    const { client, args, round } = await roundOf('full', MARK.question)
    for (const inputResponses of [[], 'accept'] as unknown[]) {
      const out = await callRaw(client, 'gateway.agent.run', args, {
        requestState: round.requestState,
        inputResponses: inputResponses as Record<string, unknown>,
      }).catch((error: { code?: number }) => ({ rpc: error.code }))
      // Refused by the gateway (invalid_input) or already by the SDK's own request check.
      expect(errorOf(out as Record<string, unknown>) ?? (out as { rpc?: number }).rpc).toMatch(
        /invalid_input|-32602/,
      )
    }
  })
})

it('leaks no upstream id, key or handle into bodies or logs', () => {
  expectNoLeaks(h)
})
