import { HttpResponse, http } from 'msw'
import { describe, expect, it } from 'vitest'
import {
  BLOCKED_WORD,
  expectNoLeaks,
  MARK,
  POLICIES,
  THROW_WORD,
  tamper,
  UNAVAILABLE_WORD,
  useHarness,
  WHO,
  type Who,
} from './harness.js'
import { expectShape, InteractionRespondShape, JobStatusShape, PermissionInteractionShape } from './shapes.js'

// gateway.interaction.respond for every policy: who may approve, what must still be pending,
// whose interaction it is, and that answers and notes are screened before the runtime sees them.

const h = useHarness()

interface Asked {
  status: ReturnType<typeof JobStatusShape.parse>
  sid: string
  interaction: string
  requestId: string
}

async function ask(who: Who, kind: 'permission' | 'question'): Promise<Asked> {
  const marker = kind === 'permission' ? MARK.permission : MARK.question
  const status = expectShape(
    JobStatusShape,
    await h.clients[who].ok('gateway.agent.run', { message: `please ${marker}`, waitMs: 5_000 }),
  )
  expect(status.status).toBe('input_required')
  const interaction = status.interactions?.[0]?.interaction ?? ''
  const sid = await h.sessionId(who, status.session)
  const requestId = String((await h.open('interaction', who, interaction)).r)
  return { status, sid, interaction, requestId }
}

const replies = (mark: number) =>
  h.requestsSince(mark).filter((r) => r.method === 'POST' && /^\/(permission|question)\//.test(r.path))
const permissionPending = (id: string) => h.fake.state.permissions.has(id)
const questionPending = (id: string) => h.fake.state.questions.has(id)

describe('permissions', () => {
  it.each([
    ['chat', 'once'],
    ['chat', 'always'],
    ['read', 'once'],
    ['read', 'always'],
    ['chat2', 'once'],
  ] as const)(
    '%s can never approve (%s): forbidden, and nothing reaches the runtime',
    async (who, decision) => {
      const asked = await ask(who, 'permission')
      const mark = h.fake.requests.length
      expect(
        await h.clients[who].errorCode('gateway.interaction.respond', {
          interaction: asked.interaction,
          decision,
        }),
      ).toBe('forbidden')
      expect(replies(mark)).toEqual([])
      expect(permissionPending(asked.requestId)).toBe(true)
      expect(h.fake.state.alwaysApproved).toEqual([])
    },
  )

  it.each(POLICIES)('%s may reject a permission; the runtime gets the rejection', async (policy) => {
    const who = WHO[policy]
    const asked = await ask(who, 'permission')
    const mark = h.fake.requests.length
    const out = expectShape(
      InteractionRespondShape,
      await h.clients[who].ok('gateway.interaction.respond', {
        interaction: asked.interaction,
        decision: 'reject',
      }),
    )
    expect(out).toEqual({ accepted: true, kind: 'permission' })
    expect(replies(mark)).toEqual([{ method: 'POST', path: `/permission/${asked.requestId}/reply` }])
    expect(permissionPending(asked.requestId)).toBe(false)
    // Rejected without a note: the tool fails and the turn ends.
    const after = await h.clients[who].ok('gateway.job.get', { job: asked.status.job, waitMs: 5_000 })
    expect(after.status).toBe('completed')
  })

  it('lets full approve once; the turn goes on and can complete', async () => {
    const asked = await ask('full', 'permission')
    const out = await h.clients.full.ok('gateway.interaction.respond', {
      interaction: asked.interaction,
      decision: 'once',
    })
    expect(out).toEqual({ accepted: true, kind: 'permission' })
    expect(permissionPending(asked.requestId)).toBe(false)
    expect((await h.clients.full.ok('gateway.job.get', { job: asked.status.job })).status).toBe('running')
    h.fake.completeTurn(asked.sid, 'approved and done')
    expect(
      await h.clients.full.ok('gateway.job.get', { job: asked.status.job, waitMs: 5_000 }),
    ).toMatchObject({
      status: 'completed',
      text: 'approved and done',
    })
  })

  it('lets full approve always; the runtime records the approval', async () => {
    const asked = await ask('full', 'permission')
    const out = await h.clients.full.ok('gateway.interaction.respond', {
      interaction: asked.interaction,
      decision: 'always',
    })
    expect(out).toEqual({ accepted: true, kind: 'permission' })
    expect(h.fake.state.alwaysApproved).toContain('rm *')
  })

  it('passes a rejection note on; the turn goes on with that feedback', async () => {
    const asked = await ask('read', 'permission')
    await h.clients.read.ok('gateway.interaction.respond', {
      interaction: asked.interaction,
      decision: 'reject',
      message: 'use the safer script instead',
    })
    const tool = h.fake.state.messages
      .get(asked.sid)
      ?.flatMap((m) => m.parts)
      .find((p) => p.type === 'tool')
    expect(JSON.stringify(tool)).toContain('use the safer script instead')
    expect(h.fake.runningTurn(asked.sid)).toBeDefined()
  })

  it.each([
    ['no decision', {}],
    ['answers instead of a decision', { answers: [['Blue']] }],
    ['answers with a decision', { decision: 'reject', answers: [['Blue']] }],
  ])('refuses a permission response with %s as invalid_input', async (_name, extra) => {
    const asked = await ask('full', 'permission')
    const mark = h.fake.requests.length
    expect(
      await h.clients.full.errorCode('gateway.interaction.respond', {
        interaction: asked.interaction,
        ...extra,
      }),
    ).toBe('invalid_input')
    expect(replies(mark)).toEqual([])
    expect(permissionPending(asked.requestId)).toBe(true)
  })
})

describe('questions', () => {
  it.each(POLICIES)(
    '%s answers a question; the runtime gets one label array per question',
    async (policy) => {
      const who = WHO[policy]
      const asked = await ask(who, 'question')
      const mark = h.fake.requests.length
      const out = await h.clients[who].ok('gateway.interaction.respond', {
        interaction: asked.interaction,
        answers: [['Red']],
      })
      expect(out).toEqual({ accepted: true, kind: 'question' })
      expect(replies(mark)).toEqual([{ method: 'POST', path: `/question/${asked.requestId}/reply` }])
      expect(questionPending(asked.requestId)).toBe(false)
      const tool = h.fake.state.messages
        .get(asked.sid)
        ?.flatMap((m) => m.parts)
        .find((p) => p.type === 'tool')
      expect(JSON.stringify(tool)).toContain('\\"Which colour?\\"=\\"Red\\"')
    },
  )

  it.each(POLICIES)('%s dismisses a question with decision reject alone', async (policy) => {
    const who = WHO[policy]
    const asked = await ask(who, 'question')
    const mark = h.fake.requests.length
    const out = await h.clients[who].ok('gateway.interaction.respond', {
      interaction: asked.interaction,
      decision: 'reject',
    })
    expect(out).toEqual({ accepted: true, kind: 'question' })
    expect(replies(mark)).toEqual([{ method: 'POST', path: `/question/${asked.requestId}/reject` }])
    expect(questionPending(asked.requestId)).toBe(false)
  })

  it.each([
    ['no answers and no decision', {}],
    ['decision once', { decision: 'once' }],
    ['answers and a decision', { decision: 'reject', answers: [['Blue']] }],
    ['two answer arrays for one question', { answers: [['Blue'], ['Red']] }],
    ['no answer array for its question', { answers: [] }],
    ['a permission note', { answers: [['Blue']], message: 'note' }],
  ])('refuses a question response with %s as invalid_input', async (_name, extra) => {
    const asked = await ask('chat', 'question')
    const mark = h.fake.requests.length
    expect(
      await h.clients.chat.errorCode('gateway.interaction.respond', {
        interaction: asked.interaction,
        ...extra,
      }),
    ).toBe('invalid_input')
    expect(replies(mark)).toEqual([])
    expect(questionPending(asked.requestId)).toBe(true)
  })
})

// OpenCode 1.18.33 asks webfetch with `always: ["*"]`: "always" would approve every URL for the
// whole project until the runtime restarts, so the gateway offers and accepts only once/reject.
describe('webfetch permissions', () => {
  const URL = 'https://example.com/docs/page'

  async function askWebfetch(who: Who): Promise<Asked & { permission: ReturnType<typeof parsePermission> }> {
    const started = expectShape(
      JobStatusShape,
      await h.clients[who].ok('gateway.agent.run', { message: 'fetch a page', waitMs: 0 }),
    )
    const sid = await h.sessionId(who, started.session)
    const request = h.fake.askPermission(sid, { permission: 'webfetch', patterns: [URL], always: ['*'] })
    const out = await h.clients[who].call('gateway.job.get', { job: started.job })
    if (out.kind !== 'result' || out.isError) throw new Error(`job.get failed: ${JSON.stringify(out)}`)
    const status = expectShape(JobStatusShape, out.structured)
    expect(status.status).toBe('input_required')
    const permission = parsePermission(status.interactions?.[0])
    expect(JSON.parse(out.text)).toEqual(out.structured)
    return { status, sid, interaction: permission.interaction, requestId: request.id, permission }
  }
  const parsePermission = (value: unknown) => expectShape(PermissionInteractionShape, value)

  it.each([
    ['chat', ['reject']],
    ['read', ['reject']],
    ['full', ['once', 'reject']],
  ] as const)('offers %s only the decisions %j for a webfetch ask', async (policy, decisions) => {
    const asked = await askWebfetch(WHO[policy])
    expect(asked.permission).toMatchObject({ permission: 'webfetch', patterns: [URL] })
    expect(asked.permission.allowedDecisions).toEqual(decisions)
  })

  it('refuses full an "always" approval of a webfetch ask with forbidden; nothing reaches the runtime', async () => {
    const asked = await askWebfetch('full')
    const mark = h.fake.requests.length
    const out = await h.clients.full.call('gateway.interaction.respond', {
      interaction: asked.interaction,
      decision: 'always',
    })
    expect(out.kind === 'result' && out.error).toEqual({
      code: 'forbidden',
      message: 'A web fetch request can be approved once or rejected, never always.',
    })
    expect(replies(mark)).toEqual([])
    expect(permissionPending(asked.requestId)).toBe(true)
    expect(h.fake.state.alwaysApproved).not.toContain('*')
  })

  it('lets full approve a webfetch ask once', async () => {
    const asked = await askWebfetch('full')
    const mark = h.fake.requests.length
    expect(
      await h.clients.full.ok('gateway.interaction.respond', {
        interaction: asked.interaction,
        decision: 'once',
      }),
    ).toEqual({ accepted: true, kind: 'permission' })
    expect(replies(mark)).toEqual([{ method: 'POST', path: `/permission/${asked.requestId}/reply` }])
    expect(permissionPending(asked.requestId)).toBe(false)
    expect(h.fake.state.alwaysApproved).not.toContain('*')
  })

  it.each(['chat', 'read'] as const)(
    'refuses %s any approval of a webfetch ask, as for every ask',
    async (who) => {
      const asked = await askWebfetch(who)
      for (const decision of ['once', 'always'] as const)
        expect(
          await h.clients[who].errorCode('gateway.interaction.respond', {
            interaction: asked.interaction,
            decision,
          }),
        ).toBe('forbidden')
      expect(permissionPending(asked.requestId)).toBe(true)
    },
  )

  it('still lets full approve "always" for an ask of another permission', async () => {
    const asked = await ask('full', 'permission')
    expect(asked.status.interactions?.[0]).toMatchObject({
      permission: 'bash',
      allowedDecisions: ['once', 'always', 'reject'],
    })
  })
})

describe('pending and ownership', () => {
  it.each(['permission', 'question'] as const)(
    'answers a %s that is no longer pending with not_pending',
    async (kind) => {
      const asked = await ask('full', kind)
      const args =
        kind === 'permission'
          ? { interaction: asked.interaction, decision: 'reject' }
          : { interaction: asked.interaction, answers: [['Blue']] }
      await h.clients.full.ok('gateway.interaction.respond', args)
      const mark = h.fake.requests.length
      expect(await h.clients.full.errorCode('gateway.interaction.respond', args)).toBe('not_pending')
      expect(replies(mark)).toEqual([])
    },
  )

  it('answers a permission answered between the pending check and the reply (runtime 404) with not_pending', async () => {
    const asked = await ask('full', 'permission')
    h.server.use(
      http.post(h.fake.url('/permission/:requestID/reply'), () =>
        HttpResponse.json({ name: 'PermissionNotFoundError', data: { message: 'gone' } }, { status: 404 }),
      ),
    )
    try {
      expect(
        await h.clients.full.errorCode('gateway.interaction.respond', {
          interaction: asked.interaction,
          decision: 'reject',
        }),
      ).toBe('not_pending')
    } finally {
      h.server.resetHandlers()
    }
  })

  it('answers a question dismissed between the pending check and the reject (runtime 404) with not_pending', async () => {
    const asked = await ask('chat', 'question')
    h.server.use(
      http.post(h.fake.url('/question/:requestID/reject'), () =>
        HttpResponse.json({ name: 'QuestionNotFoundError', data: { message: 'gone' } }, { status: 404 }),
      ),
    )
    try {
      expect(
        await h.clients.chat.errorCode('gateway.interaction.respond', {
          interaction: asked.interaction,
          decision: 'reject',
        }),
      ).toBe('not_pending')
    } finally {
      h.server.resetHandlers()
    }
  })

  it('answers a question answered between the pending check and the reply (runtime 404) with not_pending', async () => {
    const asked = await ask('chat', 'question')
    h.server.use(
      http.post(h.fake.url('/question/:requestID/reply'), () =>
        HttpResponse.json({ name: 'QuestionNotFoundError', data: { message: 'gone' } }, { status: 404 }),
      ),
    )
    try {
      expect(
        await h.clients.chat.errorCode('gateway.interaction.respond', {
          interaction: asked.interaction,
          answers: [['Blue']],
        }),
      ).toBe('not_pending')
    } finally {
      h.server.resetHandlers()
    }
  })

  it('refuses an interaction of a cancelled job with not_pending once its ask is settled', async () => {
    const asked = await ask('chat', 'question')
    await h.clients.chat.ok('gateway.job.cancel', { job: asked.status.job })
    expect(
      await h.clients.chat.errorCode('gateway.interaction.respond', {
        interaction: asked.interaction,
        answers: [['Blue']],
      }),
    ).toBe('not_pending')
  })

  it.each(['permission', 'question'] as const)(
    'answers another credential’s %s handle with not_found and sends nothing',
    async (kind) => {
      const asked = await ask('chat', kind)
      const mark = h.fake.requests.length
      for (const who of ['chat2', 'read', 'full'] as const) {
        expect(
          await h.clients[who].errorCode('gateway.interaction.respond', {
            interaction: asked.interaction,
            decision: 'reject',
          }),
        ).toBe('not_found')
      }
      expect(replies(mark)).toEqual([])
      expect(
        kind === 'permission' ? permissionPending(asked.requestId) : questionPending(asked.requestId),
      ).toBe(true)
    },
  )

  it('answers a well-sealed handle that points into another credential’s session with not_found', async () => {
    const theirs = await ask('chat2', 'permission')
    // Sealed for chat's identity (as if chat had minted it) but naming chat2's session and ask.
    const crafted = await h.seal('interaction', 'chat', { s: theirs.sid, r: theirs.requestId, k: 'p' })
    const mark = h.fake.requests.length
    expect(
      await h.clients.chat.errorCode('gateway.interaction.respond', {
        interaction: crafted,
        decision: 'reject',
      }),
    ).toBe('not_found')
    expect(replies(mark)).toEqual([])
    expect(permissionPending(theirs.requestId)).toBe(true)
  })

  it('refuses a well-sealed handle pairing an own session with an ask of another own session', async () => {
    const a = await ask('read', 'permission')
    const b = await ask('read', 'permission')
    const crafted = await h.seal('interaction', 'read', { s: a.sid, r: b.requestId, k: 'p' })
    const mark = h.fake.requests.length
    const out = await h.clients.read.call('gateway.interaction.respond', {
      interaction: crafted,
      decision: 'reject',
    })
    expect(out.kind === 'result' && out.isError).toBe(true)
    expect(replies(mark)).toEqual([])
    expect(permissionPending(b.requestId)).toBe(true)
  })

  it('answers a tampered interaction handle with not_found', async () => {
    const asked = await ask('chat', 'question')
    expect(
      await h.clients.chat.errorCode('gateway.interaction.respond', {
        interaction: tamper(asked.interaction),
        answers: [['Blue']],
      }),
    ).toBe('not_found')
    expect(questionPending(asked.requestId)).toBe(true)
  })

  it('answers a raw upstream ask id with handle_invalid', async () => {
    const asked = await ask('full', 'permission')
    expect(
      await h.clients.full.errorCode('gateway.interaction.respond', {
        interaction: asked.requestId,
        decision: 'reject',
      }),
    ).toBe('handle_invalid')
    expect(permissionPending(asked.requestId)).toBe(true)
  })

  it('answers a job handle given as an interaction with not_found', async () => {
    const asked = await ask('full', 'permission')
    expect(
      await h.clients.full.errorCode('gateway.interaction.respond', {
        interaction: asked.status.job,
        decision: 'reject',
      }),
    ).toBe('not_found')
  })
})

describe('screening of answers and notes', () => {
  it.each([
    [BLOCKED_WORD, 'blocked_by_moderation'],
    [THROW_WORD, 'moderator_unavailable'],
    [UNAVAILABLE_WORD, 'moderator_unavailable'],
  ])('screens question answers (%s → %s) and the runtime receives nothing', async (word, code) => {
    const asked = await ask('chat', 'question')
    const mark = h.fake.requests.length
    const seen = h.screened.length
    expect(
      await h.clients.chat.errorCode('gateway.interaction.respond', {
        interaction: asked.interaction,
        answers: [[`Blue, and ${word}`]],
      }),
    ).toBe(code)
    expect(replies(mark)).toEqual([])
    expect(questionPending(asked.requestId)).toBe(true)
    expect(h.screened.slice(seen)).toEqual([
      {
        kind: 'answer',
        text: `Blue, and ${word}`,
        parts: [`Blue, and ${word}`],
        principal: expect.objectContaining({ username: 'discord' }),
      },
    ])
  })

  it('screens every answer of a multi-question ask, not only the first', async () => {
    const status = expectShape(
      JobStatusShape,
      await h.clients.read.ok('gateway.agent.run', { message: 'two questions', waitMs: 0 }),
    )
    const sid = await h.sessionId('read', status.session)
    h.fake.askQuestion(sid, [
      { question: 'First?', header: 'One', options: [{ label: 'A', description: 'a' }] },
      { question: 'Second?', header: 'Two', options: [{ label: 'B', description: 'b' }], custom: true },
    ])
    const polled = await h.clients.read.ok('gateway.job.get', { job: status.job })
    const interaction = (polled.interactions as Array<{ interaction: string }>)[0]?.interaction
    const mark = h.fake.requests.length
    expect(
      await h.clients.read.errorCode('gateway.interaction.respond', {
        interaction,
        answers: [['A'], [`custom ${BLOCKED_WORD}`]],
      }),
    ).toBe('blocked_by_moderation')
    expect(replies(mark)).toEqual([])
  })

  it.each([
    [BLOCKED_WORD, 'blocked_by_moderation'],
    [THROW_WORD, 'moderator_unavailable'],
  ])('screens a permission note (%s → %s) and the runtime receives nothing', async (word, code) => {
    const asked = await ask('full', 'permission')
    const mark = h.fake.requests.length
    const seen = h.screened.length
    expect(
      await h.clients.full.errorCode('gateway.interaction.respond', {
        interaction: asked.interaction,
        decision: 'reject',
        message: `because ${word}`,
      }),
    ).toBe(code)
    expect(replies(mark)).toEqual([])
    expect(permissionPending(asked.requestId)).toBe(true)
    expect(h.screened.slice(seen)).toEqual([
      {
        kind: 'permission_message',
        text: `because ${word}`,
        principal: expect.objectContaining({ username: 'owner' }),
      },
    ])
  })

  it('lets a screened-clean answer through after a blocked one', async () => {
    const asked = await ask('chat2', 'question')
    await h.clients.chat2.errorCode('gateway.interaction.respond', {
      interaction: asked.interaction,
      answers: [[BLOCKED_WORD]],
    })
    expect(
      await h.clients.chat2.ok('gateway.interaction.respond', {
        interaction: asked.interaction,
        answers: [['Blue']],
      }),
    ).toEqual({ accepted: true, kind: 'question' })
  })
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expectNoLeaks(h)
  })
})
