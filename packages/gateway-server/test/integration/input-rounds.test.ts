import { describe, expect, it } from 'vitest'
import { expectNoLeaks, type FormAsked, MARK, useHarness } from './harness.js'
import { callRaw, errorOf, type Round, roundHelpers } from './rounds-helpers.js'

// Agent questions and permission requests as the client's own dialogs (MCP 2026-07-28 multi
// round-trip requests), against the fake runtime: the forms, what their answers do, and who sees
// the plain polling flow instead. The refusals of a retry: input-rounds-retries.test.ts.

const h = useHarness()
const { replies, lastReply, completeAfterReply, dialogs, roundOf, auditLines } = roundHelpers(h)

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

  it('an empty form ends the dialogs: the plain input_required status comes back', async () => {
    const { session, forms } = await dialogs('full', { action: 'accept', content: {} })
    const out = await session.ok('gateway.agent.run', { message: MARK.question, waitMs: 5_000 })
    expect(forms).toHaveLength(1)
    expect(out.status).toBe('input_required')
    // The question is still pending: interaction.respond answers it.
    const [q] = out.interactions as Array<{ interaction: string }>
    const ok = await session.ok('gateway.interaction.respond', {
      interaction: q?.interaction,
      answers: [['Red']],
    })
    expect(ok).toEqual({ accepted: true, kind: 'question' })
  })

  it('bounds the rounds of one call: after 8 the plain input_required status comes back', async () => {
    // Every answer makes the agent ask again.
    const again = ({ request }: { request: Request }) => {
      const path = new URL(request.url).pathname
      if (request.method !== 'POST' || !/^\/question\/[^/]+\/reply$/.test(path)) return
      const replied = h.fake.events.filter((e) => e.type === 'question.replied').at(-1)
      const sessionId = (replied?.properties as { sessionID?: string } | undefined)?.sessionID
      if (sessionId) h.fake.askQuestion(sessionId)
    }
    h.server.events.on('response:mocked', again)
    try {
      const { session, forms } = await dialogs('full', { action: 'accept', content: { answer: 'Blue' } })
      const out = await session.ok('gateway.agent.run', { message: MARK.question, waitMs: 10_000 })
      expect(forms).toHaveLength(8)
      expect(out.status).toBe('input_required')
      expect((out.interactions as unknown[]).length).toBe(1)
      expect(auditLines().at(-1)).toMatchObject({ inputRound: 8, inputAnswered: 1 })
    } finally {
      h.server.events.removeListener('response:mocked', again)
    }
  })

  it('a retry waits only for the budget left, which its state carries', async () => {
    const { client, args, round } = await roundOf('full', MARK.question, 1_000)
    const state = await h.open('request_state', 'full', round.requestState)
    expect(state.n).toBe(1)
    expect(state.w).toBeGreaterThan(0)
    expect(state.w).toBeLessThanOrEqual(1_000)
    // The answer is sent; the turn completes only 5 s later, long after the budget left: the
    // retry ends its wait with `running` (a fresh budget of its own would have seen `completed`).
    const sid = String(state.s)
    const later = setTimeout(() => h.fake.runningTurn(sid) && h.fake.completeTurn(sid, 'late'), 5_000)
    try {
      const out = await callRaw(client, 'gateway.agent.run', args, {
        requestState: round.requestState,
        inputResponses: { 'q1.1': { action: 'accept', content: { answer: 'Blue' } } },
      })
      expect((out.structuredContent as { status: string }).status).toBe('running')
    } finally {
      clearTimeout(later)
    }
  })
})

describe('what a round carries', () => {
  it('the handles of its job, so a client whose dialogs fail can still follow it', async () => {
    const { client, round } = await roundOf('chat', MARK.question)
    const meta = round._meta as Record<string, string>
    expect(meta['sallyport/session']).toMatch(/^v1\./)
    const job = await callRaw(client, 'gateway.job.get', { job: meta['sallyport/job'] })
    expect((job.structuredContent as { status: string }).status).toBe('input_required')
  })

  it('whole asks only, at most 16 forms: a question of 17 items is left to the polling flow', async () => {
    const manual = await h.connect('full', { manual: true })
    const started = await callRaw(manual.client, 'gateway.agent.run', { message: 'many', waitMs: 0 })
    const { session, job } = started.structuredContent as { session: string; job: string }
    const sid = await h.sessionId('full', session)
    const item = (i: number) => ({
      header: `H${i}`,
      question: `Q${i}?`,
      options: [{ label: 'yes', description: '' }],
    })
    h.fake.askQuestion(
      sid,
      Array.from({ length: 17 }, (_, i) => item(i)),
    )
    // Not answerable by a form at all (no option, no typing): also left to the polling flow.
    h.fake.askQuestion(sid, [{ header: 'X', question: 'Nothing to pick?', options: [], custom: false }])
    h.fake.askPermission(sid)
    const round = (await callRaw(manual.client, 'gateway.job.get', {
      job,
      waitMs: 5_000,
    })) as unknown as Round
    expect(Object.keys(round.inputRequests)).toEqual(['p1'])
  })

  it('only asks it can answer; without any, the plain status', async () => {
    const manual = await h.connect('full', { manual: true })
    const started = await callRaw(manual.client, 'gateway.agent.run', { message: 'odd', waitMs: 0 })
    const { session, job } = started.structuredContent as { session: string; job: string }
    h.fake.askQuestion(await h.sessionId('full', session), [
      { header: 'X', question: 'Nothing to pick?', options: [], custom: false },
    ])
    const out = await callRaw(manual.client, 'gateway.job.get', { job, waitMs: 5_000 })
    expect((out.structuredContent as { status: string }).status).toBe('input_required')
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

  it('reads an accepted reject-only form without a value as the rejection (a client that skips defaults)', async () => {
    const { session } = await dialogs('read', { action: 'accept', content: {} })
    const out = await session.ok('gateway.agent.run', { message: MARK.permission, waitMs: 5_000 })
    expect(out.status).toBe('completed')
    expect(lastReply('permission.replied').reply).toBe('reject')
    // A rejection chosen in the form is an answer, not a dismissed dialog.
    const last = auditLines().at(-1)
    expect([last?.inputRound, last?.inputAnswered, last?.inputDeclined]).toEqual([1, 1, 0])
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
