import type { Client } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import {
  BLOCKED_WORD,
  expectNoLeaks,
  type FormAnswer,
  type FormAsked,
  MARK,
  type McpSession,
  tamper,
  UNAVAILABLE_WORD,
  useHarness,
  type Who,
} from './harness.js'

// Agent questions and permission requests as the client's own dialogs (MCP 2026-07-28 multi
// round-trip requests), against the fake runtime: the forms, what their answers do, the
// requestState's refusals, and who sees the plain polling flow instead.

const h = useHarness()

const QUESTION_REPLY = /^\/question\/[^/]+\/reply$/
const PERMISSION_REPLY = /^\/permission\/[^/]+\/reply$/
const replies = (mark: number) =>
  h.requestsSince(mark).filter((r) => r.method === 'POST' && /^\/(permission|question)\//.test(r.path))

/** The properties of the newest runtime event of `type`. */
function lastReply(type: 'question.replied' | 'permission.replied'): Record<string, unknown> {
  const event = h.fake.events.filter((e) => e.type === type).at(-1)
  if (!event) throw new Error(`no ${type} event`)
  return event.properties as Record<string, unknown>
}

/** Completes the turn of the session whose ask was just answered, as the model would go on. */
function completeAfterReply(text: string): () => void {
  const listener = ({ request }: { request: Request }) => {
    const path = new URL(request.url).pathname
    if (request.method !== 'POST' || !(QUESTION_REPLY.test(path) || PERMISSION_REPLY.test(path))) return
    const replied = [...h.fake.events]
      .reverse()
      .find((e) => e.type === 'question.replied' || e.type === 'permission.replied')
    const sessionId = (replied?.properties as { sessionID?: string } | undefined)?.sessionID
    if (sessionId && h.fake.runningTurn(sessionId)) h.fake.completeTurn(sessionId, text)
  }
  h.server.events.on('response:mocked', listener)
  return () => h.server.events.removeListener('response:mocked', listener)
}

/** A client whose dialogs answer from `answers` in order (the last one repeats); records the forms. */
async function dialogs(
  who: Who,
  ...answers: FormAnswer[]
): Promise<{ session: McpSession; forms: FormAsked[] }> {
  const forms: FormAsked[] = []
  const session = await h.connect(who, {
    elicit: (form) => {
      forms.push(form)
      return answers[Math.min(forms.length - 1, answers.length - 1)] as FormAnswer
    },
  })
  return { session, forms }
}

interface Round {
  requestState: string
  inputRequests: Record<string, { method: string; params: FormAsked & { message: string } }>
}

/** One call through a client that fulfils nothing: the round it got (or the complete result). */
async function callRaw(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  retry?: { requestState: string; inputResponses?: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  return (await client.callTool(
    { name, arguments: args, ...retry } as never,
    {
      allowInputRequired: true,
    } as never,
  )) as Record<string, unknown>
}

const errorOf = (result: Record<string, unknown>): string | undefined => {
  if (result.isError !== true) return undefined
  const text = (result.content as Array<{ text: string }>)[0]?.text ?? ''
  return (JSON.parse(text) as { error: { code: string } }).error.code
}

async function roundOf(who: Who, marker: string, waitMs = 5_000) {
  const manual = await h.connect(who, { manual: true })
  const args = { message: `please ${marker}`, waitMs }
  const round = (await callRaw(manual.client, 'gateway.agent.run', args)) as unknown as Round
  expect(round.requestState).toMatch(/^v1\./)
  return { client: manual.client, args, round }
}

const auditLines = () =>
  h.logs
    .raw()
    .split('\n')
    .filter((l) => l.includes('"event":"audit"') && l.includes('"tools/call"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)

describe('questions as forms', () => {
  it('asks one form per question, answers it, and completes in one logical call', async () => {
    const done = completeAfterReply('answered Blue')
    const { session, forms } = await dialogs('full', { action: 'accept', content: { answer: 'Blue' } })
    const mark = h.fake.requests.length
    const before = auditLines().length
    const out = await session.ok('gateway.agent.run', { message: `colour? ${MARK.question}`, waitMs: 5_000 })
    done()
    expect(out).toMatchObject({ status: 'completed', text: 'answered Blue' })
    expect(forms).toEqual([
      {
        mode: 'form',
        message: 'Which colour?',
        requestedSchema: {
          type: 'object',
          properties: {
            answer: {
              type: 'string',
              title: 'Colour',
              oneOf: [
                { const: 'Blue', title: 'Blue: The sky' },
                { const: 'Red', title: 'Red: The fire' },
              ],
            },
            custom: { type: 'string', title: 'Or type your own answer', maxLength: 2000 },
          },
          required: [],
        },
      },
    ])
    expect(replies(mark)).toHaveLength(1)
    expect(lastReply('question.replied').answers).toEqual([['Blue']])
    // The audit log has a line per round: the forms asked, then the answers applied.
    const rounds = auditLines().slice(before)
    expect(rounds.map((l) => [l.inputRound, l.inputAsked, l.inputAnswered, l.outcome])).toEqual([
      [0, 1, undefined, 'ok'],
      [1, undefined, 1, 'ok'],
    ])
    expect(rounds[1]?.screening).toBe('passed')
  })

  it('sends a typed answer as the answer (the question allows one)', async () => {
    const done = completeAfterReply('ok')
    const { session } = await dialogs('chat', { action: 'accept', content: { custom: '  Green, please  ' } })
    await session.ok('gateway.agent.run', { message: MARK.question, waitMs: 5_000 })
    done()
    expect(lastReply('question.replied').answers).toEqual([['Green, please']])
    expect(h.screened.at(-1)).toMatchObject({ kind: 'answer', text: 'Green, please' })
  })

  it('asks several items as several forms: multiple choice as an array, no typing where the question allows none', async () => {
    const questions = [
      {
        header: 'Files',
        question: 'Which files?',
        multiple: true,
        custom: false,
        options: [
          { label: 'a.ts', description: '' },
          { label: 'b.ts', description: 'the other one' },
        ],
      },
      { header: '', question: 'Anything else?', options: [] },
    ]
    const forms: FormAsked[] = []
    const session = await h.connect('read', {
      elicit: (form) => {
        forms.push(form)
        return form.message === 'Which files?'
          ? { action: 'accept', content: { answer: ['b.ts', 'a.ts'] } }
          : { action: 'accept', content: { custom: 'no' } }
      },
    })
    const started = await session.ok('gateway.agent.run', { message: 'plain', waitMs: 0 })
    const sid = await h.sessionId('read', String(started.session))
    h.fake.askQuestion(sid, questions)
    const done = completeAfterReply('both answered')
    const out = await session.ok('gateway.job.get', { job: started.job, waitMs: 5_000 })
    done()
    expect(out).toMatchObject({ status: 'completed', text: 'both answered' })
    expect(forms.map((f) => f.requestedSchema)).toEqual([
      {
        type: 'object',
        properties: {
          answer: {
            type: 'array',
            title: 'Files',
            items: {
              anyOf: [
                { const: 'a.ts', title: 'a.ts' },
                { const: 'b.ts', title: 'b.ts: the other one' },
              ],
            },
            minItems: 1,
            maxItems: 2,
          },
        },
        required: ['answer'],
      },
      {
        type: 'object',
        properties: { custom: { type: 'string', title: 'Answer', maxLength: 2000 } },
        required: ['custom'],
      },
    ])
    expect(lastReply('question.replied').answers).toEqual([['b.ts', 'a.ts'], ['no']])
  })

  it.each(['decline', 'cancel'] as const)('a %sd dialog dismisses the question', async (action) => {
    const { session } = await dialogs('chat', { action })
    const mark = h.fake.requests.length
    const out = await session.ok('gateway.agent.run', { message: MARK.question, waitMs: 5_000 })
    // Dismissed: the question tool fails and the turn ends.
    expect(out.status).toBe('completed')
    expect(replies(mark).map((r) => r.path)).toEqual([expect.stringMatching(/^\/question\/[^/]+\/reject$/)])
    const last = auditLines().at(-1)
    expect([last?.inputRound, last?.inputAnswered, last?.inputDeclined]).toEqual([1, 0, 1])
  })

  it('asks again when a form comes back empty', async () => {
    const done = completeAfterReply('second time lucky')
    const { session, forms } = await dialogs(
      'full',
      { action: 'accept', content: {} },
      { action: 'accept', content: { answer: 'Red' } },
    )
    const out = await session.ok('gateway.agent.run', { message: MARK.question, waitMs: 5_000 })
    done()
    expect(out).toMatchObject({ status: 'completed', text: 'second time lucky' })
    expect(forms).toHaveLength(2)
  })

  it(`bounds the rounds of one call: after 8 the plain input_required status comes back`, async () => {
    const { session, forms } = await dialogs('full', { action: 'accept', content: {} })
    const out = await session.ok('gateway.agent.run', { message: MARK.question, waitMs: 5_000 })
    expect(forms).toHaveLength(8)
    expect(out.status).toBe('input_required')
    expect((out.interactions as unknown[]).length).toBe(1)
  })

  it('a retry waits only for the budget left, which its state carries', async () => {
    const { client, args, round } = await roundOf('full', MARK.question, 1_000)
    const state = await h.open('request_state', 'full', round.requestState)
    expect(state.n).toBe(1)
    expect(state.w).toBeGreaterThan(0)
    expect(state.w).toBeLessThanOrEqual(1_000)
    // The answer is sent; nobody completes the turn, so the retry ends its wait with `running`.
    const out = await callRaw(client, 'gateway.agent.run', args, {
      requestState: round.requestState,
      inputResponses: { 'q1.1': { action: 'accept', content: { answer: 'Blue' } } },
    })
    expect((out.structuredContent as { status: string }).status).toBe('running')
  })
})

describe('permission requests as forms', () => {
  it('offers full once, always and reject, naming what always approves; once goes to the runtime', async () => {
    const done = completeAfterReply('approved')
    const { session, forms } = await dialogs('full', { action: 'accept', content: { decision: 'once' } })
    const out = await session.ok('gateway.agent.run', { message: MARK.permission, waitMs: 5_000 })
    done()
    expect(out).toMatchObject({ status: 'completed', text: 'approved' })
    expect(forms).toEqual([
      {
        mode: 'form',
        message:
          'The agent asks for permission (bash: rm -rf build). "Approve always" approves rm * for the whole workspace until the runtime restarts.',
        requestedSchema: {
          type: 'object',
          properties: {
            decision: {
              type: 'string',
              title: 'Decision',
              oneOf: [
                { const: 'once', title: 'Approve once' },
                { const: 'always', title: 'Approve always' },
                { const: 'reject', title: 'Reject' },
              ],
            },
            message: { type: 'string', title: 'Note to the agent (optional)', maxLength: 1000 },
          },
          required: ['decision'],
        },
      },
    ])
    expect(lastReply('permission.replied').reply).toBe('once')
  })

  it('lets full approve always', async () => {
    const done = completeAfterReply('always ok')
    const { session } = await dialogs('full', { action: 'accept', content: { decision: 'always' } })
    await session.ok('gateway.agent.run', { message: MARK.permission, waitMs: 5_000 })
    done()
    expect(h.fake.state.alwaysApproved).toContain('rm *')
  })

  it.each(['full', 'chat', 'read'] as const)('%s rejects with a note, screened first', async (who) => {
    const { session, forms } = await dialogs(who, {
      action: 'accept',
      content: { decision: 'reject', message: 'use the build script instead' },
    })
    const out = await session.ok('gateway.agent.run', { message: MARK.permission, waitMs: 300 })
    // Rejected with feedback: the turn goes on (and nobody completes it here).
    expect(out.status).toBe('running')
    expect(h.screened.at(-1)).toMatchObject({
      kind: 'permission_message',
      text: 'use the build script instead',
    })
    expect(lastReply('permission.replied').reply).toBe('reject')
    const decision = forms[0]?.requestedSchema.properties.decision
    if (who === 'full') expect(decision?.oneOf).toHaveLength(3)
    else {
      // Without the full policy the form offers the rejection only.
      expect(decision).toMatchObject({ oneOf: [{ const: 'reject', title: 'Reject' }], default: 'reject' })
      expect(forms[0]?.message).toContain('cannot approve')
    }
  })

  it.each(['decline', 'cancel'] as const)('a %sd permission dialog rejects the request', async (action) => {
    const { session } = await dialogs('chat', { action })
    const out = await session.ok('gateway.agent.run', { message: MARK.permission, waitMs: 5_000 })
    // Rejected without a note: the tool fails and the turn ends.
    expect(out.status).toBe('completed')
    expect(lastReply('permission.replied').reply).toBe('reject')
  })

  it.each([
    ['chat', 'once'],
    ['read', 'always'],
    ['chat2', 'once'],
  ] as const)(
    '%s cannot approve through a form (%s): forbidden, nothing reaches the runtime',
    async (who, decision) => {
      const { client, args, round } = await roundOf(who, MARK.permission)
      const mark = h.fake.requests.length
      const out = await callRaw(client, 'gateway.agent.run', args, {
        requestState: round.requestState,
        inputResponses: { p1: { action: 'accept', content: { decision } } },
      })
      expect(errorOf(out)).toBe('forbidden')
      expect(replies(mark)).toEqual([])
      const asked = await h.open('request_state', who, round.requestState)
      expect(h.fake.state.permissions.has(String((asked.a as Array<{ r: string }>)[0]?.r))).toBe(true)
    },
  )
})

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

describe('who sees the polling flow', () => {
  it('a 2026-07-28 client that declares no elicitation', async () => {
    const out = await h.clients.full.ok('gateway.agent.run', { message: MARK.question, waitMs: 5_000 })
    expect(out.status).toBe('input_required')
  })

  it('a 2025-era client, even one that declares elicitation', async () => {
    const forms: FormAsked[] = []
    const legacy = await h.connect('full', {
      mode: 'legacy',
      elicit: (form) => {
        forms.push(form)
        return { action: 'decline' }
      },
    })
    const out = await legacy.ok('gateway.agent.run', { message: MARK.question, waitMs: 5_000 })
    expect(out.status).toBe('input_required')
    expect(forms).toEqual([])
  })

  it('a call that does not wait (waitMs 0)', async () => {
    const { session, forms } = await dialogs('full', { action: 'accept', content: { answer: 'Blue' } })
    const started = await session.ok('gateway.agent.run', { message: MARK.question, waitMs: 0 })
    const sid = await h.sessionId('full', String(started.session))
    await expect.poll(() => [...h.fake.state.questions.values()].some((q) => q.sessionID === sid)).toBe(true)
    const out = await session.ok('gateway.job.get', { job: started.job })
    expect(out.status).toBe('input_required')
    expect(forms).toEqual([])
  })

  it('leaks no upstream id, key or handle into bodies or logs', () => {
    expectNoLeaks(h)
  })
})
