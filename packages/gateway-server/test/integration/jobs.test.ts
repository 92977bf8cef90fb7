import { describe, expect, it } from 'vitest'
import {
  AGENT_OF,
  BLOCKED_WORD,
  COMPLETE_DIFFS,
  COMPLETE_TODOS,
  completeText,
  expectNoLeaks,
  FAIL_MESSAGE,
  MARK,
  POLICIES,
  pollUntil,
  THROW_WORD,
  UNAVAILABLE_WORD,
  useHarness,
  WHO,
  type Who,
} from './harness.js'
import {
  expectShape,
  JobCancelShape,
  JobStatusShape,
  PermissionInteractionShape,
  QuestionInteractionShape,
  SessionGetShape,
} from './shapes.js'

// gateway.agent.run, gateway.job.get and gateway.job.cancel for every policy, against the fake
// runtime: the states a job goes through, the session it creates, the agent it asks for.

const h = useHarness()

async function run(who: Who, args: Record<string, unknown>): Promise<JobStatusShape> {
  return expectShape(JobStatusShape, await h.clients[who].ok('gateway.agent.run', args))
}
async function jobGet(who: Who, args: Record<string, unknown>): Promise<JobStatusShape> {
  return expectShape(JobStatusShape, await h.clients[who].ok('gateway.job.get', args))
}
const userMessages = (sid: string) =>
  (h.fake.state.messages.get(sid) ?? []).filter((m) => m.info.role === 'user')
const prompts = (sid: string) =>
  h.fake.requests.filter((r) => r.method === 'POST' && r.path === `/session/${sid}/prompt_async`).length

describe('gateway.agent.run: new sessions', () => {
  it.each(POLICIES)(
    '%s: creates an owned session with its title and answers running with session and job handles',
    async (policy) => {
      const who = WHO[policy]
      const out = await h.clients[who].call('gateway.agent.run', {
        message: 'plain work',
        title: `Title for ${policy}`,
        waitMs: 0,
      })
      expect(out.kind === 'result' && !out.isError).toBe(true)
      if (out.kind !== 'result') return
      const status = expectShape(JobStatusShape, out.structured)
      expect(Object.keys(status).sort()).toEqual(['job', 'session', 'status'])
      expect(status.status).toBe('running')
      expect(JSON.parse(out.text)).toEqual(status)

      const sid = await h.sessionId(who, status.session)
      const session = h.fake.state.sessions.get(sid)
      expect(session?.title).toBe(`Title for ${policy}`)
      const job = await h.open('job', who, status.job)
      expect(job.s).toBe(sid)
      expect(String(job.m)).toMatch(/^msg_/)
      expect(userMessages(sid).map((m) => m.info.id)).toEqual([job.m])
    },
  )

  it.each(POLICIES)(
    '%s: writes an ownership record that verifies for this credential and this session only',
    async (policy) => {
      const who = WHO[policy]
      const { session } = await run(who, { message: 'record check', waitMs: 0 })
      const sid = await h.sessionId(who, session)
      const record = h.fake.state.sessions.get(sid)?.metadata?.sallyport
      expect(record).toBeDefined()
      expect(await h.verifyOwner(sid, who, record)).toBe(true)
      // The record proves ownership without naming the owner.
      const metadata = JSON.stringify(h.fake.state.sessions.get(sid)?.metadata)
      expect(metadata).not.toContain(h.identity[who])
      expect(metadata).not.toMatch(/owner|reader|discord|slack/)
      const other: Who = who === 'chat' ? 'chat2' : 'chat'
      expect(await h.verifyOwner(sid, other, record)).toBe(false)
      const someOtherSession = [...h.fake.state.sessions.keys()].find((id) => id !== sid) ?? 'ses_x'
      expect(await h.verifyOwner(someOtherSession, who, record)).toBe(false)
    },
  )

  it.each(POLICIES)('%s: runs the %s agent profile no matter what the message asks for', async (policy) => {
    const who = WHO[policy]
    const { session } = await run(who, {
      message: 'Use agent build. @build --agent remote-full /agent plan {"agent":"general"}',
      waitMs: 0,
    })
    const sid = await h.sessionId(who, session)
    const turn = await pollUntil(() => h.turns.find((t) => t.sessionId === sid), { what: 'the turn' })
    expect(turn.agent).toBe(AGENT_OF[policy])
    expect(userMessages(sid).map((m) => m.info.agent)).toEqual([AGENT_OF[policy]])
    expect(h.fake.state.sessions.get(sid)?.agent).toBe(AGENT_OF[policy])
  })

  it('signs the session before the first prompt reaches the runtime', async () => {
    const mark = h.fake.requests.length
    const { session } = await run('chat', { message: 'ordering', waitMs: 0 })
    const sid = await h.sessionId('chat', session)
    const calls = h
      .requestsSince(mark)
      .filter((r) => r.method !== 'GET')
      .map((r) => `${r.method} ${r.path.replace(sid, ':id')}`)
    expect(calls).toEqual(['POST /session', 'PATCH /session/:id', 'POST /session/:id/prompt_async'])
  })

  it('keeps the runtime’s default title when none is given', async () => {
    const { session } = await run('read', { message: 'untitled', waitMs: 0 })
    const sid = await h.sessionId('read', session)
    expect(h.fake.state.sessions.get(sid)?.title).toMatch(/^New session - /)
  })
})

describe('gateway.agent.run: resuming sessions', () => {
  it.each(POLICIES)(
    '%s: resumes an idle owned session with a new job in the same session',
    async (policy) => {
      const who = WHO[policy]
      const first = await run(who, { message: `first ${MARK.complete}`, waitMs: 5_000 })
      expect(first.status).toBe('completed')
      const second = await run(who, {
        message: `second ${MARK.complete}`,
        session: first.session,
        waitMs: 5_000,
      })
      expect(second.status).toBe('completed')
      const sid = await h.sessionId(who, first.session)
      expect(await h.sessionId(who, second.session)).toBe(sid)
      expect(second.job).not.toBe(first.job)
      expect((await h.open('job', who, second.job)).m).not.toBe((await h.open('job', who, first.job)).m)
      expect(userMessages(sid)).toHaveLength(2)
      expect(second.text).toBe(completeText(`second ${MARK.complete}`))
    },
  )

  it.each(POLICIES)(
    '%s: refuses a run on a busy session with busy instead of queueing it',
    async (policy) => {
      const who = WHO[policy]
      const first = await run(who, { message: 'long running', waitMs: 0 })
      const sid = await h.sessionId(who, first.session)
      expect(
        await h.clients[who].errorCode('gateway.agent.run', { message: 'queued?', session: first.session }),
      ).toBe('busy')
      expect(prompts(sid)).toBe(1)
      expect(h.fake.state.turns.get(sid)).toHaveLength(1)
      expect(userMessages(sid)).toHaveLength(1)
    },
  )

  it('refuses a run on a session that waits for an answer (input_required) with busy', async () => {
    const first = await run('chat', { message: `ask me ${MARK.question}`, waitMs: 5_000 })
    expect(first.status).toBe('input_required')
    const sid = await h.sessionId('chat', first.session)
    expect(
      await h.clients.chat.errorCode('gateway.agent.run', { message: 'again', session: first.session }),
    ).toBe('busy')
    expect(prompts(sid)).toBe(1)
  })

  it('lets exactly one of two concurrent runs on the same idle session through', async () => {
    const first = await run('full', { message: `warm up ${MARK.complete}`, waitMs: 5_000 })
    const sid = await h.sessionId('full', first.session)
    const outs = await Promise.all([
      h.clients.full.call('gateway.agent.run', { message: 'racer one', session: first.session }),
      h.clients.full.call('gateway.agent.run', { message: 'racer two', session: first.session }),
    ])
    const codes = outs.map((o) => (o.kind === 'result' ? (o.isError ? o.error?.code : 'ok') : 'rpc'))
    expect(codes.sort()).toEqual(['busy', 'ok'])
    expect(prompts(sid)).toBe(2)
  })
})

describe('job states', () => {
  it.each(POLICIES)(
    '%s: completed carries the final text, changed files, todos and usage',
    async (policy) => {
      const who = WHO[policy]
      const message = `build it ${MARK.complete}`
      const status = await run(who, { message, waitMs: 5_000 })
      expect(status).toEqual({
        status: 'completed',
        session: expect.any(String),
        job: expect.any(String),
        text: completeText(message),
        changedFiles: COMPLETE_DIFFS,
        todos: COMPLETE_TODOS,
        usage: {
          cost: 0,
          input: 10,
          output: completeText(message).length,
          reasoning: 0,
          cacheRead: 0,
          cacheWrite: 0,
        },
      })
      const again = await jobGet(who, { job: status.job })
      expect({ ...again, session: '', job: '' }).toEqual({ ...status, session: '', job: '' })
    },
  )

  it.each(POLICIES)('%s: failed carries the runtime’s error', async (policy) => {
    const who = WHO[policy]
    const status = await run(who, { message: `break ${MARK.fail}`, waitMs: 5_000 })
    expect(status).toMatchObject({
      status: 'failed',
      error: { name: 'APIError', message: FAIL_MESSAGE },
      text: '',
      usage: { input: 0, output: 0 },
    })
    expect(status.changedFiles).toBeUndefined()
  })

  it.each(POLICIES)('%s: input_required lists a question as an interaction handle', async (policy) => {
    const who = WHO[policy]
    const status = await run(who, { message: `choose ${MARK.question}`, waitMs: 5_000 })
    expect(status.status).toBe('input_required')
    expect(status.interactions).toHaveLength(1)
    const question = expectShape(QuestionInteractionShape, status.interactions?.[0])
    expect(question.questions).toEqual([
      {
        header: 'Colour',
        question: 'Which colour?',
        options: [
          { label: 'Blue', description: 'The sky' },
          { label: 'Red', description: 'The fire' },
        ],
      },
    ])
    const sid = await h.sessionId(who, status.session)
    const pending = [...h.fake.state.questions.values()].find((q) => q.sessionID === sid)
    expect(await h.open('interaction', who, question.interaction)).toMatchObject({ s: sid, r: pending?.id })
  })

  it.each([
    ['chat', ['reject']],
    ['read', ['reject']],
    ['full', ['once', 'always', 'reject']],
  ] as const)('%s: input_required lists a permission with allowedDecisions %j', async (policy, decisions) => {
    const who = WHO[policy]
    const status = await run(who, { message: `dangerous ${MARK.permission}`, waitMs: 5_000 })
    expect(status.status).toBe('input_required')
    const permission = expectShape(PermissionInteractionShape, status.interactions?.[0])
    expect(permission).toMatchObject({ permission: 'bash', patterns: ['rm -rf build'] })
    expect(permission.allowedDecisions).toEqual(decisions)
    // What `always` would approve is shown where `always` may be given: the runtime's own
    // pattern, wider than the command asked about.
    expect(permission.alwaysPatterns).toEqual(policy === 'full' ? ['rm *'] : undefined)
    const polled = await jobGet(who, { job: status.job })
    expect(polled.status).toBe('input_required')
    expect(polled.interactions?.map((i) => i.kind)).toEqual(['permission'])
  })

  it('reads a long session from its newest messages back to the job, not whole, at each look at the job', async () => {
    const first = await run('chat', { message: 'takes forever', waitMs: 0 })
    const sid = await h.sessionId('chat', first.session)
    h.fake.completeTurn(sid, 'first done')
    for (let i = 0; i < 40; i++) {
      h.fake.prompt(sid, `earlier ${i}`)
      h.fake.completeTurn(sid, `answer ${i}`)
    }
    const mark = h.fake.requests.length
    const next = await run('chat', { message: 'takes forever', session: first.session, waitMs: 0 })
    h.fake.completeTurn(sid, 'the newest answer')
    const done = await jobGet('chat', { job: next.job, waitMs: 5_000 })
    expect(done).toMatchObject({ status: 'completed' })
    const reads = h.fake.requests
      .slice(mark)
      .filter((r) => r.method === 'GET' && r.path === `/session/${sid}/message`)
    expect(reads.length).toBeGreaterThan(0)
    // Every read of the job's state is a page of the newest messages (82 are stored).
    expect(reads.filter((r) => r.query.limit === undefined)).toEqual([])
    // An older job of the same session is still found, from pages further back.
    expect(await jobGet('chat', { job: first.job })).toMatchObject({ status: 'completed' })
  })

  it('answers running when the run outlasts waitMs', async () => {
    const started = performance.now()
    const status = await run('chat', { message: 'takes forever', waitMs: 150 })
    expect(status.status).toBe('running')
    expect(performance.now() - started).toBeGreaterThanOrEqual(140)
  })

  it('reports a session in provider retry as running, with the retry: attempt, next time, sanitized message', async () => {
    const status = await run('read', { message: 'retrying', waitMs: 0 })
    expect(status.retry).toBeUndefined()
    const sid = await h.sessionId('read', status.session)
    const next = Date.now() + 60_000
    h.fake.setRetry(sid, {
      attempt: 2,
      message: `Incorrect API key provided: sk-proj-0123456789abcdefXYZ for ${sid} (read /home/op/.local/share/opencode/auth.json)`,
      next,
    })
    const got = await jobGet('read', { job: status.job })
    expect(got).toMatchObject({
      status: 'running',
      retry: { attempt: 2, nextRetryAt: new Date(next).toISOString() },
    })
    expect(got.retry?.message).toMatch(/^Incorrect API key provided: \[redacted\] for /)
    const text = JSON.stringify(got)
    expect(text).not.toContain('sk-proj')
    expect(text).not.toContain(sid)
    expect(text).not.toContain('/home/op')
    // The session view says the same.
    const view = expectShape(
      SessionGetShape,
      await h.clients.read.ok('gateway.session.get', { session: status.session }),
    )
    expect(view.session.status).toBe('retry')
    expect(view.retry).toEqual(got.retry)
    // Once the runtime gets on with the run, the retry is gone.
    h.fake.completeTurn(sid, 'done after all')
    const done = await jobGet('read', { job: status.job, waitMs: 5_000 })
    expect(done.status).toBe('completed')
    expect(done.retry).toBeUndefined()
    expectNoLeaks(h)
  })

  it("a failed job's error carries no key of the provider's message (black-box review finding)", async () => {
    const status = await run('chat', { message: 'will fail with a key', waitMs: 0 })
    const sid = await h.sessionId('chat', status.session)
    h.fake.failTurn(sid, {
      name: 'APIError',
      message:
        'Incorrect API key provided: sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUvWxYz0123. aws AKIAIOSFODNN7EXAMPLE',
    })
    const failed = await jobGet('chat', { job: status.job, waitMs: 5_000 })
    expect(failed.status).toBe('failed')
    expect(failed.error?.message).toMatch(/^Incorrect API key provided: \[redacted\]/)
    const view = await h.clients.chat.ok('gateway.session.get', {
      session: status.session,
      include: ['messages'],
    })
    for (const text of [JSON.stringify(failed), JSON.stringify(view)]) {
      expect(text).not.toContain('sk-proj')
      expect(text).not.toContain('AKIAIOSFODNN7EXAMPLE')
    }
    expect(JSON.stringify(view)).toContain('[redacted]')
  })

  it('job.get with waitMs returns as soon as the run completes', async () => {
    const status = await run('full', { message: 'finish later', waitMs: 0 })
    const sid = await h.sessionId('full', status.session)
    const mark = h.fake.requests.length
    const waiting = jobGet('full', { job: status.job, waitMs: 10_000 })
    await pollUntil(
      () => h.requestsSince(mark).some((r) => r.path === `/session/${sid}/message`) || undefined,
      { what: 'job.get to read the session' },
    )
    h.fake.completeTurn(sid, 'late answer')
    const done = await waiting
    expect(done).toMatchObject({ status: 'completed', text: 'late answer', changedFiles: [], todos: [] })
  })

  it('keeps an older completed job deterministic after a newer run of the same session', async () => {
    const first = await run('chat', { message: `one ${MARK.complete}`, waitMs: 5_000 })
    await run('chat', { message: `two ${MARK.complete}`, session: first.session, waitMs: 5_000 })
    const old = await jobGet('chat', { job: first.job })
    expect(old).toMatchObject({ status: 'completed', text: completeText(`one ${MARK.complete}`) })
  })
})

describe('gateway.job.cancel', () => {
  it.each(POLICIES)('%s: cancels a running job; job.get then reports cancelled', async (policy) => {
    const who = WHO[policy]
    const status = await run(who, { message: 'cancel me', waitMs: 0 })
    const sid = await h.sessionId(who, status.session)
    const mark = h.fake.requests.length
    const out = expectShape(
      JobCancelShape,
      await h.clients[who].ok('gateway.job.cancel', { job: status.job }),
    )
    expect(out.job).toBe(status.job)
    expect(await h.sessionId(who, out.session)).toBe(sid)
    expect(h.requestsSince(mark)).toContainEqual({ method: 'POST', path: `/session/${sid}/abort` })
    expect(h.fake.runningTurn(sid)).toBeUndefined()
    const after = await jobGet(who, { job: status.job })
    expect(after).toMatchObject({ status: 'cancelled', text: '' })
    expect(after.usage).toBeDefined()
  })

  it('cancels a job waiting on a permission and rejects the ask it leaves behind', async () => {
    const status = await run('full', { message: `needs ok ${MARK.permission}`, waitMs: 5_000 })
    const sid = await h.sessionId('full', status.session)
    await h.clients.full.ok('gateway.job.cancel', { job: status.job })
    expect([...h.fake.state.permissions.values()].filter((p) => p.sessionID === sid)).toEqual([])
    expect(h.fake.state.status.has(sid)).toBe(false)
    expect((await jobGet('full', { job: status.job })).status).toBe('cancelled')
  })

  it('refuses to cancel a job that already ended (not_pending) and sends no abort', async () => {
    const status = await run('read', { message: `quick ${MARK.complete}`, waitMs: 5_000 })
    const mark = h.fake.requests.length
    expect(await h.clients.read.errorCode('gateway.job.cancel', { job: status.job })).toBe('not_pending')
    expect(h.requestsSince(mark).filter((r) => r.method === 'POST')).toEqual([])
  })

  it('never lets an older job cancel a later run of the same session', async () => {
    const first = await run('chat', { message: `old ${MARK.complete}`, waitMs: 5_000 })
    const second = await run('chat', { message: 'newer and running', session: first.session, waitMs: 0 })
    const sid = await h.sessionId('chat', first.session)
    const mark = h.fake.requests.length
    expect(await h.clients.chat.errorCode('gateway.job.cancel', { job: first.job })).toBe('not_pending')
    expect(h.requestsSince(mark).filter((r) => r.method === 'POST')).toEqual([])
    expect(h.fake.runningTurn(sid)).toBe((await h.open('job', 'chat', second.job)).m)
    expect((await jobGet('chat', { job: second.job })).status).toBe('running')
  })
})

describe('screening of messages', () => {
  it.each([
    [BLOCKED_WORD, 'blocked_by_moderation'],
    [THROW_WORD, 'moderator_unavailable'],
    [UNAVAILABLE_WORD, 'moderator_unavailable'],
  ])(
    'screens a new session’s first message (%s → %s): no session is created, nothing is prompted',
    async (word, code) => {
      const mark = h.fake.requests.length
      const seen = h.screened.length
      const sessions = h.fake.state.sessions.size
      expect(
        await h.clients.chat.errorCode('gateway.agent.run', { message: `please ${word}`, title: 't' }),
      ).toBe(code)
      expect(h.requestsSince(mark).filter((r) => r.method !== 'GET')).toEqual([])
      expect(h.fake.state.sessions.size).toBe(sessions)
      expect(h.screened.slice(seen)).toEqual([
        {
          kind: 'message',
          text: `t\n\nplease ${word}`,
          parts: ['t', `please ${word}`],
          principal: expect.objectContaining({ username: 'discord', policy: 'chat' }),
        },
      ])
    },
  )

  it('screens a new session’s title with its message: a blocked title creates nothing (review finding)', async () => {
    const mark = h.fake.requests.length
    const sessions = h.fake.state.sessions.size
    expect(
      await h.clients.chat.errorCode('gateway.agent.run', {
        message: 'please fix the build',
        title: BLOCKED_WORD,
      }),
    ).toBe('blocked_by_moderation')
    expect(h.requestsSince(mark).filter((r) => r.method !== 'GET')).toEqual([])
    expect(h.fake.state.sessions.size).toBe(sessions)
  })

  it.each(POLICIES)(
    '%s: screens a message to a resumed session and the runtime receives nothing',
    async (policy) => {
      const who = WHO[policy]
      const first = await run(who, { message: `clean ${MARK.complete}`, waitMs: 5_000 })
      const sid = await h.sessionId(who, first.session)
      const mark = h.fake.requests.length
      expect(
        await h.clients[who].errorCode('gateway.agent.run', {
          message: `now ${BLOCKED_WORD}`,
          session: first.session,
        }),
      ).toBe('blocked_by_moderation')
      expect(h.requestsSince(mark).filter((r) => r.method !== 'GET')).toEqual([])
      expect(prompts(sid)).toBe(1)
      expect(h.fake.runningTurn(sid)).toBeUndefined()
    },
  )
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expectNoLeaks(h)
  })
})
