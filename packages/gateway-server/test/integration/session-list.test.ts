import { beforeAll, describe, expect, it } from 'vitest'
import { expectNoLeaks, MARK, useHarness, type Who } from './harness.js'
import { expectShape, SessionListShape } from './shapes.js'

// gateway.session.list: only sessions whose ownership record verifies for the caller, newest
// update first, paged with limit/cursor. The fake's clock ticks one second per reading, so every
// timestamp differs and the expected order is exact.

let clock = Date.UTC(2026, 0, 1)
const h = useHarness({ now: () => (clock += 1_000) })

const ids: Record<'A' | 'B' | 'C' | 'D' | 'E' | 'copied' | 'unsigned' | 'child', string> = {
  A: '',
  B: '',
  C: '',
  D: '',
  E: '',
  copied: '',
  unsigned: '',
  child: '',
}
const paged: string[] = []
let readBeforeSeeding: unknown

async function started(who: Who, message: string, waitMs = 0): Promise<string> {
  const out = await h.clients[who].ok('gateway.agent.run', { message, title: message.slice(0, 20), waitMs })
  return h.sessionId(who, String(out.session))
}
async function list(who: Who, args: Record<string, unknown> = {}) {
  return expectShape(SessionListShape, await h.clients[who].ok('gateway.session.list', args))
}
async function listIds(who: Who, args: Record<string, unknown> = {}): Promise<string[]> {
  const out = await list(who, args)
  return Promise.all(out.sessions.map((s) => h.sessionId(who, s.session)))
}

beforeAll(async () => {
  ids.A = await started('chat', `alpha ${MARK.complete}`, 5_000)
  ids.B = await started('chat', 'bravo')
  ids.C = await started('chat', `charlie ${MARK.question}`, 5_000)
  ids.D = await started('chat2', 'delta')
  ids.E = await started('full', 'echo')
  // A session carrying a copy of A's record (what a fork would carry), one without a record, and
  // a subagent (child) session of A with a record that is valid for its own id.
  const a = h.fake.state.sessions.get(ids.A)
  ids.copied = h.fake.addSession({ title: 'copied', metadata: structuredClone(a?.metadata ?? {}) }).id
  ids.unsigned = h.fake.addSession({ title: 'unsigned' }).id
  ids.child = await h.seedOwned('chat', { title: 'child', parentID: ids.A })
  readBeforeSeeding = await list('read')
  for (let i = 0; i < 23; i++) paged.push(await h.seedOwned('read', { title: `seeded ${i}` }))
})

describe('gateway.session.list', () => {
  it('lists only the caller’s own root sessions, newest first', async () => {
    // The copied-record, unsigned and child sessions are newer than every owned one, yet absent.
    expect(await listIds('chat')).toEqual([ids.C, ids.B, ids.A])
    expect(await listIds('chat2')).toEqual([ids.D])
    expect(await listIds('full')).toEqual([ids.E])
  })

  it('does not accept a copied ownership record as proof', async () => {
    const copied = h.fake.state.sessions.get(ids.copied)
    expect(copied?.metadata).toEqual(h.fake.state.sessions.get(ids.A)?.metadata)
    expect(await listIds('chat')).not.toContain(ids.copied)
  })

  it('orders by the last update, not by creation', async () => {
    h.fake.completeTurn(ids.B, 'bravo done')
    expect(await listIds('chat')).toEqual([ids.B, ids.C, ids.A])
  })

  it('gives each session a summary of handles, title, ISO times and live status', async () => {
    const upstreamA = h.fake.state.sessions.get(ids.A)
    h.fake.state.sessions.set(ids.A, {
      ...(upstreamA as NonNullable<typeof upstreamA>),
      summary: { additions: 7, deletions: 2, files: 3 },
    })
    const out = await list('chat')
    const byId = new Map(
      await Promise.all(out.sessions.map(async (s) => [await h.sessionId('chat', s.session), s] as const)),
    )
    const a = byId.get(ids.A)
    expect(a).toMatchObject({
      title: `alpha ${MARK.complete}`.slice(0, 20),
      status: 'idle',
      createdAt: new Date(upstreamA?.time.created ?? 0).toISOString(),
      updatedAt: new Date(upstreamA?.time.updated ?? 0).toISOString(),
      summary: { additions: 7, deletions: 2, files: 3 },
    })
    expect(byId.get(ids.C)?.status).toBe('busy')
    expect(byId.get(ids.B)?.summary).toBeUndefined()
    expect(out.nextCursor).toBeUndefined()
  })

  it('returns an empty list to a credential that owns nothing', () => {
    // Taken in beforeAll, before any session of 'read' existed but with 8 sessions of others.
    expect(readBeforeSeeding).toEqual({ sessions: [] })
  })

  it('pages 20 at a time by default and hands out a cursor for the rest', async () => {
    const expected = [...paged].reverse()
    const first = await list('read')
    expect(first.sessions).toHaveLength(20)
    expect(first.nextCursor).toEqual(expect.any(String))
    const second = await list('read', { cursor: first.nextCursor })
    expect(second.sessions).toHaveLength(3)
    expect(second.nextCursor).toBeUndefined()
    const all = await Promise.all(
      [...first.sessions, ...second.sessions].map((s) => h.sessionId('read', s.session)),
    )
    expect(all).toEqual(expected)
  })

  it('honours limit and walks every page exactly once', async () => {
    const seen: string[] = []
    const sizes: number[] = []
    let cursor: string | undefined
    do {
      const page = await list('read', { limit: 5, ...(cursor !== undefined && { cursor }) })
      sizes.push(page.sessions.length)
      seen.push(...(await Promise.all(page.sessions.map((s) => h.sessionId('read', s.session)))))
      cursor = page.nextCursor
    } while (cursor !== undefined && sizes.length < 10)
    expect(sizes).toEqual([5, 5, 5, 5, 3])
    expect(seen).toEqual([...paged].reverse())
  })

  it.each([1, 100])('accepts limit %i', async (limit) => {
    const page = await list('read', { limit })
    expect(page.sessions).toHaveLength(Math.min(limit, 23))
    expect(page.nextCursor === undefined).toBe(limit >= 23)
  })

  it('answers a cursor past the end with an empty page', async () => {
    const first = await list('read', { limit: 20 })
    const cursor = String(first.nextCursor)
    // The cursor format is the gateway's own; one far past the end is valid and empty.
    const far = cursor.replace(/\.[0-9a-z]+$/, '.zz')
    expect(await list('read', { cursor: far })).toEqual({ sessions: [] })
  })

  it.each([
    'nope',
    'c1.',
    'c1.-1',
    'c2.5',
    'c1.A',
    'c1.zzzzzzzzz',
    'c1.5 ',
    'v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  ])('refuses the bad cursor %j with invalid_input', async (cursor) => {
    expect(await h.clients.read.errorCode('gateway.session.list', { cursor })).toBe('invalid_input')
  })
})

describe('many listings at once', () => {
  it('share the runtime’s listings: 20 parallel lists cost far fewer than 20 upstream listings, each answer exact', async () => {
    const expected = await listIds('chat')
    const mark = h.fake.requests.length
    const lists = await Promise.all(Array.from({ length: 20 }, () => listIds('chat')))
    for (const ids of lists) expect(ids).toEqual(expected)
    const listings = h.requestsSince(mark).filter((r) => r.method === 'GET' && r.path === '/session')
    expect(listings.length).toBeGreaterThan(0)
    expect(listings.length).toBeLessThanOrEqual(10)
  })
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expectNoLeaks(h)
  })
})
