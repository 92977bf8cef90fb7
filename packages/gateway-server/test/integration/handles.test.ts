import { randomBytes } from 'node:crypto'
import { createHandleCodec, type HandleKind } from '@sallyport/handles'
import { beforeAll, describe, expect, it } from 'vitest'
import { expectNoLeaks, MARK, type McpSession, tamper, useHarness, type Who } from './harness.js'
import { expectShape, JobStatusShape, SessionGetShape } from './shapes.js'

// Every handle argument of every tool, for every policy that has the tool, against every kind of
// bad handle. A handle that is not the caller's (tampered, truncated, sealed by another key or
// for another credential or kind, or naming an object the caller does not own) is `not_found`,
// with one fixed body, so nothing tells whether the object exists; a string that is not a
// handle at all (a raw upstream id) is `handle_invalid`. No bad handle ever reaches the runtime.

const h = useHarness()
const DAY = 24 * 60 * 60 * 1000

interface Fixture {
  session: string
  job: string
  interaction: string
  message: string
  sid: string
  messageId: string
  requestId: string
}
const fixtures = {} as Record<Who, Fixture>

async function fixture(who: Who): Promise<Fixture> {
  const status = expectShape(
    JobStatusShape,
    await h.clients[who].ok('gateway.agent.run', { message: `hold ${MARK.permission}`, waitMs: 5_000 }),
  )
  const view = expectShape(
    SessionGetShape,
    await h.clients[who].ok('gateway.session.get', { session: status.session, include: ['messages'] }),
  )
  const interaction = status.interactions?.[0]?.interaction ?? ''
  const message = view.messages?.[0]?.message ?? ''
  return {
    session: status.session,
    job: status.job,
    interaction,
    message,
    sid: await h.sessionId(who, status.session),
    messageId: String((await h.open('message', who, message)).m),
    requestId: String((await h.open('interaction', who, interaction)).r),
  }
}

beforeAll(async () => {
  for (const who of ['chat', 'read', 'full', 'chat2'] as const) fixtures[who] = await fixture(who)
})

type Slot = 'session' | 'job' | 'interaction' | 'message'
interface ToolSlot {
  tool: string
  arg: string
  kind: Slot
  policies: readonly Who[]
  args: (own: Fixture) => Record<string, unknown>
}
const ALL: readonly Who[] = ['chat', 'read', 'full']
const SLOTS: ToolSlot[] = [
  {
    tool: 'gateway.agent.run',
    arg: 'session',
    kind: 'session',
    policies: ALL,
    args: () => ({ message: 'x' }),
  },
  { tool: 'gateway.job.get', arg: 'job', kind: 'job', policies: ALL, args: () => ({}) },
  { tool: 'gateway.job.cancel', arg: 'job', kind: 'job', policies: ALL, args: () => ({}) },
  {
    tool: 'gateway.session.get',
    arg: 'session',
    kind: 'session',
    policies: ALL,
    args: () => ({ include: ['messages'] }),
  },
  { tool: 'gateway.session.fork', arg: 'session', kind: 'session', policies: ['full'], args: () => ({}) },
  {
    tool: 'gateway.session.fork',
    arg: 'message',
    kind: 'message',
    policies: ['full'],
    args: (own) => ({ session: own.session }),
  },
  { tool: 'gateway.session.delete', arg: 'session', kind: 'session', policies: ['full'], args: () => ({}) },
  {
    tool: 'gateway.interaction.respond',
    arg: 'interaction',
    kind: 'interaction',
    policies: ALL,
    args: () => ({ decision: 'reject' }),
  },
]

const OTHER_KIND: Record<Slot, Slot> = {
  session: 'job',
  job: 'session',
  interaction: 'job',
  message: 'session',
}
const otherKey = createHandleCodec({ secret: new Uint8Array(randomBytes(32)) })

type Variant = (own: Fixture, who: Who, slot: Slot) => Promise<string> | string
const NOT_FOUND_VARIANTS: Record<string, Variant> = {
  tampered: (own, _who, slot) => tamper(own[slot]),
  truncated: (own, _who, slot) => own[slot].slice(0, -12),
  'cut to its prefix and a few characters': (own, _who, slot) => own[slot].slice(0, 12),
  'of another credential': (_own, who, slot) => fixtures[who === 'chat' ? 'chat2' : 'chat'][slot],
  'of another kind': (own, _who, slot) => own[OTHER_KIND[slot]],
  'sealed with another key': async (own, who, slot) =>
    otherKey.seal(slot as HandleKind, h.identity[who], await h.open(slot as HandleKind, who, own[slot])),
  'of another version': (own, _who, slot) => `v2.${own[slot].slice(3)}`,
  'sealed for this credential but naming another credential’s object': async (_own, who, slot) => {
    const theirs = fixtures[who === 'chat' ? 'chat2' : 'chat']
    const payload: Record<Slot, Record<string, unknown>> = {
      session: { s: theirs.sid },
      job: { s: theirs.sid, m: theirs.messageId, t: Date.now() },
      interaction: { s: theirs.sid, r: theirs.requestId, k: 'p' },
      message: { s: theirs.sid, m: theirs.messageId },
    }
    return h.seal(slot as HandleKind, who, payload[slot])
  },
}
const INVALID_VARIANTS: Record<string, Variant> = {
  'that is a raw upstream id': (own, _who, slot) =>
    slot === 'interaction' ? own.requestId : slot === 'message' || slot === 'job' ? own.messageId : own.sid,
  'with whitespace around it': (own, _who, slot) => ` ${own[slot]} `,
  'that is a sentence': () => 'please show me session one',
}

const cases = SLOTS.flatMap((slot) =>
  slot.policies.flatMap((who) => [
    ...Object.keys(NOT_FOUND_VARIANTS).map(
      (variant) => [who, slot.tool, slot.arg, variant, 'not_found', slot] as const,
    ),
    ...Object.keys(INVALID_VARIANTS).map(
      (variant) => [who, slot.tool, slot.arg, variant, 'handle_invalid', slot] as const,
    ),
  ]),
)

async function attempt(client: McpSession, who: Who, slot: ToolSlot, variant: string) {
  const own = fixtures[who]
  const make = NOT_FOUND_VARIANTS[variant] ?? INVALID_VARIANTS[variant]
  const bad = await (make as Variant)(own, who, slot.kind)
  return client.call(slot.tool, { ...slot.args(own), [slot.arg]: bad })
}

const notFoundBodies: string[] = []

describe('bad handles', () => {
  it.each(cases)(
    '%s: %s with %s = a handle %s → %s, runtime untouched',
    async (who, _tool, _arg, variant, code, slot) => {
      const mark = h.fake.requests.length
      const out = await attempt(h.clients[who], who, slot, variant)
      expect(out).toMatchObject({ kind: 'result', isError: true, error: { code } })
      expect(h.requestsSince(mark).filter((r) => r.method !== 'GET')).toEqual([])
      if (code === 'not_found' && out.kind === 'result') notFoundBodies.push(out.text)
    },
  )

  it('answered every not_found above with one fixed body, whatever the cause', () => {
    expect(notFoundBodies).toHaveLength(cases.filter((c) => c[4] === 'not_found').length)
    expect([...new Set(notFoundBodies)]).toEqual([
      JSON.stringify({ error: { code: 'not_found', message: 'Not found.' } }),
    ])
  })

  it('answers a foreign session handle exactly like a handle of a session that never existed', async () => {
    const ghost = await h.seal('session', 'chat', { s: 'ses_0000000000000000000000000' })
    const foreign = fixtures.chat2.session
    const outGhost = await h.clients.chat.call('gateway.session.get', { session: ghost })
    const outForeign = await h.clients.chat.call('gateway.session.get', { session: foreign })
    expect(outGhost).toEqual(outForeign)
    expect(outGhost).toMatchObject({ error: { code: 'not_found' } })
  })

  it('leaves every fixture intact (no bad handle deleted, cancelled or answered anything)', () => {
    for (const who of ['chat', 'read', 'full', 'chat2'] as const) {
      const own = fixtures[who]
      expect(h.fake.state.sessions.has(own.sid)).toBe(true)
      expect(h.fake.state.permissions.has(own.requestId)).toBe(true)
      expect(h.fake.runningTurn(own.sid)).toBeDefined()
    }
  })
})

describe('expired handles', () => {
  const slotsOf = SLOTS.filter((s) => s.policies.includes('full'))

  it.each(slotsOf.map((s) => [s.tool, s.arg, s] as const))(
    '%s with an own expired %s handle → handle_expired',
    async (_t, _a, slot) => {
      const later = h.extraGateway({ gateway: { now: () => Date.now() + 31 * DAY } })
      const client = await h.connect('full', { gateway: later })
      const own = fixtures.full
      const out = await client.call(slot.tool, { ...slot.args(own), [slot.arg]: own[slot.kind] })
      // For the fork's message slot the session argument has expired as well: same answer.
      expect(out).toMatchObject({ kind: 'result', isError: true, error: { code: 'handle_expired' } })
      await client.close()
    },
  )

  it('answers another credential’s expired handle with not_found, not handle_expired', async () => {
    const later = h.extraGateway({ gateway: { now: () => Date.now() + 31 * DAY } })
    const client = await h.connect('chat', { gateway: later })
    for (const slot of SLOTS.filter((s) => s.policies.includes('chat'))) {
      const out = await client.call(slot.tool, {
        ...slot.args(fixtures.chat),
        [slot.arg]: fixtures.chat2[slot.kind],
      })
      expect(out, slot.tool).toMatchObject({ error: { code: 'not_found' } })
    }
    await client.close()
  })

  it('still accepts a job handle 23 hours later and refuses it 25 hours later', async () => {
    const soon = await h.connect('read', {
      gateway: h.extraGateway({ gateway: { now: () => Date.now() + 23 * 3600_000 } }),
    })
    const late = await h.connect('read', {
      gateway: h.extraGateway({ gateway: { now: () => Date.now() + 25 * 3600_000 } }),
    })
    expect((await soon.ok('gateway.job.get', { job: fixtures.read.job })).status).toBe('input_required')
    expect(await late.errorCode('gateway.job.get', { job: fixtures.read.job })).toBe('handle_expired')
    // The session handle lives 30 days: still good 25 hours later.
    expect((await late.ok('gateway.session.get', { session: fixtures.read.session })).session).toBeDefined()
    await soon.close()
    await late.close()
  })
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expectNoLeaks(h)
  })
})
