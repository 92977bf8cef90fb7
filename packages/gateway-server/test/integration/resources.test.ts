import { beforeAll, describe, expect, it } from 'vitest'
import {
  COMPLETE_DIFFS,
  COMPLETE_TODOS,
  completeText,
  expectNoLeaks,
  MARK,
  POLICIES,
  type ReadOutcome,
  tamper,
  useHarness,
  WHO,
  type Who,
  writeWorkspace,
} from './harness.js'
import { expectShape, JobStatusShape, MessageViewShape } from './shapes.js'

// Every resource template for every policy that has it. Every read repeats the policy,
// ownership, expiry and path checks: nothing is remembered between reads.

const h = useHarness()
const DAY = 24 * 60 * 60 * 1000

interface Fixture {
  session: string
  job: string
  asking: { session: string; job: string }
}
const fixtures = {} as Record<Who, Fixture>

beforeAll(async () => {
  await writeWorkspace(h.creds.workspace)
  for (const who of ['chat', 'read', 'full', 'chat2'] as const) {
    const done = await h.clients[who].ok('gateway.agent.run', {
      message: `views ${MARK.complete}`,
      waitMs: 5_000,
    })
    const asking = await h.clients[who].ok('gateway.agent.run', {
      message: `ask ${MARK.question}`,
      waitMs: 5_000,
    })
    fixtures[who] = {
      session: String(done.session),
      job: String(done.job),
      asking: { session: String(asking.session), job: String(asking.job) },
    }
  }
})

function json(out: ReadOutcome): Record<string, unknown> {
  expect(out.ok, JSON.stringify(out.error)).toBe(true)
  expect(out.mimeType).toBe('application/json')
  return JSON.parse(out.text ?? '') as Record<string, unknown>
}

describe('session and job resources', () => {
  it.each(POLICIES)('%s reads the messages of an own session', async (policy) => {
    const who = WHO[policy]
    const uri = `gateway://sessions/${fixtures[who].session}/messages`
    const out = await h.clients[who].read(uri)
    expect(out.uri).toBe(uri)
    const body = json(out)
    expect(Object.keys(body)).toEqual(['messages'])
    const messages = (body.messages as unknown[]).map((m) => expectShape(MessageViewShape, m))
    expect(messages.map((m) => [m.role, m.text])).toEqual([
      ['user', `views ${MARK.complete}`],
      ['assistant', completeText(`views ${MARK.complete}`)],
    ])
  })

  it.each(POLICIES)('%s reads the diff of an own session', async (policy) => {
    const who = WHO[policy]
    const body = json(await h.clients[who].read(`gateway://sessions/${fixtures[who].session}/diff`))
    expect(body).toEqual({ diff: COMPLETE_DIFFS.map((d) => ({ ...d, patch: '@@ -1 +1 @@' })) })
  })

  it.each(POLICIES)('%s reads the todos of an own session', async (policy) => {
    const who = WHO[policy]
    const body = json(await h.clients[who].read(`gateway://sessions/${fixtures[who].session}/todos`))
    expect(body).toEqual({ todos: COMPLETE_TODOS })
  })

  it.each(POLICIES)('%s reads an own job: the same status as gateway.job.get', async (policy) => {
    const who = WHO[policy]
    const body = json(await h.clients[who].read(`gateway://jobs/${fixtures[who].job}`))
    const status = expectShape(JobStatusShape, body)
    const viaTool = expectShape(
      JobStatusShape,
      await h.clients[who].ok('gateway.job.get', { job: fixtures[who].job }),
    )
    // Handles are sealed afresh each time (random IV): compare everything else.
    expect({ ...status, session: '', job: '' }).toEqual({ ...viaTool, session: '', job: '' })
    expect(status).toMatchObject({ status: 'completed', text: completeText(`views ${MARK.complete}`) })
  })

  it.each(POLICIES)('%s reads a job waiting on a question, interactions included', async (policy) => {
    const who = WHO[policy]
    const body = json(await h.clients[who].read(`gateway://jobs/${fixtures[who].asking.job}`))
    const status = expectShape(JobStatusShape, body)
    expect(status.status).toBe('input_required')
    expect(status.interactions?.map((i) => i.kind)).toEqual(['question'])
  })

  it('accepts a percent-encoded handle in the URI', async () => {
    const encoded = encodeURIComponent(fixtures.chat.session).replaceAll('-', '%2D')
    const body = json(await h.clients.chat.read(`gateway://sessions/${encoded}/todos`))
    expect(body).toEqual({ todos: COMPLETE_TODOS })
  })
})

describe('refused resource reads', () => {
  const templates = (f: Fixture) => [
    `gateway://sessions/${f.session}/messages`,
    `gateway://sessions/${f.session}/diff`,
    `gateway://sessions/${f.session}/todos`,
    `gateway://jobs/${f.job}`,
  ]

  it.each(POLICIES)('%s cannot read another credential’s session or job resources', async (policy) => {
    const who = WHO[policy]
    const mark = h.fake.requests.length
    for (const uri of templates(fixtures.chat2)) {
      const out = await h.clients[who].read(uri)
      expect(out.ok, uri).toBe(false)
      expect(out.error, uri).toMatchObject({ code: -32602, message: 'Not found.' })
    }
    expect(h.requestsSince(mark).filter((r) => r.method !== 'GET')).toEqual([])
  })

  it('answers a foreign handle exactly like the handle of a session that never existed', async () => {
    const ghost = await h.seal('session', 'chat', { s: 'ses_0000000000000000000000000' })
    const foreign = await h.clients.chat.read(`gateway://sessions/${fixtures.chat2.session}/todos`)
    const missing = await h.clients.chat.read(`gateway://sessions/${ghost}/todos`)
    expect({ ...foreign.error, data: undefined }).toEqual({ ...missing.error, data: undefined })
  })

  it.each([
    [
      'a tampered session handle',
      (f: Fixture) => `gateway://sessions/${tamper(f.session)}/messages`,
      'Not found.',
    ],
    ['a job handle as session', (f: Fixture) => `gateway://sessions/${f.job}/diff`, 'Not found.'],
    ['a session handle as job', (f: Fixture) => `gateway://jobs/${f.session}`, 'Not found.'],
    ['a truncated job handle', (f: Fixture) => `gateway://jobs/${f.job.slice(0, -10)}`, 'Not found.'],
    [
      'a raw upstream session id',
      () => 'gateway://sessions/ses_0123456789abcdefABCDEFGHIJ/todos',
      'That is not a valid handle.',
    ],
  ] as const)('refuses %s in the URI', async (_name, uriOf, message) => {
    const out = await h.clients.full.read(uriOf(fixtures.full))
    expect(out.ok).toBe(false)
    expect(out.error).toMatchObject({ code: -32602, message })
  })

  it('repeats the expiry check on every read', async () => {
    const later = await h.connect('full', {
      gateway: h.extraGateway({ gateway: { now: () => Date.now() + 31 * DAY } }),
    })
    for (const uri of templates(fixtures.full)) {
      const out = await later.read(uri)
      expect(out.ok, uri).toBe(false)
      expect(out.error?.message, uri).toMatch(/expired/)
    }
    await later.close()
  })

  it('repeats the ownership check on every read: a deleted session’s resources are gone', async () => {
    const run = await h.clients.full.ok('gateway.agent.run', {
      message: `short ${MARK.complete}`,
      waitMs: 5_000,
    })
    const uri = `gateway://sessions/${String(run.session)}/todos`
    expect((await h.clients.full.read(uri)).ok).toBe(true)
    await h.clients.full.ok('gateway.session.delete', { session: run.session })
    expect((await h.clients.full.read(uri)).error).toMatchObject({ message: 'Not found.' })
    expect((await h.clients.full.read(`gateway://jobs/${String(run.job)}`)).error).toMatchObject({
      message: 'Not found.',
    })
  })

  it('repeats the ownership check on every read: a session whose record is replaced is gone', async () => {
    const run = await h.clients.read.ok('gateway.agent.run', {
      message: `mine ${MARK.complete}`,
      waitMs: 5_000,
    })
    const sid = await h.sessionId('read', String(run.session))
    const uri = `gateway://sessions/${String(run.session)}/messages`
    expect((await h.clients.read.read(uri)).ok).toBe(true)
    const session = h.fake.state.sessions.get(sid)
    const chat2Record = h.fake.state.sessions.get(
      await h.sessionId('chat2', fixtures.chat2.session),
    )?.metadata
    h.fake.state.sessions.set(sid, { ...(session as NonNullable<typeof session>), metadata: chat2Record })
    expect((await h.clients.read.read(uri)).error).toMatchObject({ message: 'Not found.' })
  })
})

describe('workspace resource', () => {
  it.each(['read', 'full'] as const)(
    '%s reads a workspace file through gateway://workspace/{+path}',
    async (who) => {
      const readme = await h.clients[who].read('gateway://workspace/README.md')
      expect(readme).toMatchObject({
        ok: true,
        mimeType: 'text/markdown',
        uri: 'gateway://workspace/README.md',
      })
      expect(readme.text).toContain('The needle is in src/app.ts.')
      const nested = await h.clients[who].read('gateway://workspace/src/lib/util.ts')
      expect(nested.text).toBe('export const needleCount = 3\n')
    },
  )

  it('is absent for chat: not listed and reading it is an unknown resource', async () => {
    const out = await h.clients.chat.read('gateway://workspace/README.md')
    const unknown = await h.clients.chat.read('gateway://nothing/README.md')
    expect(out.ok).toBe(false)
    expect(out.error?.code).toBe(unknown.error?.code)
    expect(out.error?.message).toBe('Resource not found: gateway://workspace/README.md')
    expect(out.text).toBeUndefined()
  })

  it.each([
    ['.env', 'path_denied'],
    ['src/..%2F..%2F..%2Fetc%2Fpasswd', 'path_denied'],
    ['%2Fetc%2Fpasswd', 'path_denied'],
    ['big.txt', 'too_large'],
    ['image.bin', 'not_text'],
  ])('refuses gateway://workspace/%s (%s)', async (path, code) => {
    const out = await h.clients.full.read(`gateway://workspace/${path}`)
    expect(out.ok).toBe(false)
    expect(out.error).toMatchObject({ code: -32602, data: { code } })
    expect(JSON.stringify(out)).not.toContain('needle-secret-value')
    expect(JSON.stringify(out)).not.toContain(h.creds.workspace)
  })

  it('answers a missing workspace file as not found', async () => {
    const out = await h.clients.read.read('gateway://workspace/src/missing.ts')
    expect(out).toMatchObject({ ok: false, error: { code: -32602, message: 'Not found.' } })
  })

  it('reads .env.example, which the rules allow', async () => {
    const out = await h.clients.read.read('gateway://workspace/.env.example')
    expect(out).toMatchObject({ ok: true, text: 'API_TOKEN=\n' })
  })
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expectNoLeaks(h)
  })
})
