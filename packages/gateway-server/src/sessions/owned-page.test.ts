import { createHandleCodec, createOwnershipSigner } from '@sallyport/handles'
import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import { createFakeRuntime } from '@sallyport/upstream-client/testing'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { RuntimeSession } from '../runtime/port.js'
import { runtimeFromUpstream } from '../runtime/upstream-adapter.js'
import { ownedSessions } from './owned.js'
import { newestFirst, newestOwned, type SessionPageSource } from './owned-page.js'
import { cachedOwnershipSigner } from './ownership-cache.js'

// ---- the paging itself, over an in-memory runtime that orders ties the other way round ----

const T0 = 1_767_000_000_000
const session = (n: number, updated: number): RuntimeSession => ({
  id: `ses_${String(n).padStart(6, '0')}`,
  title: `s${n}`,
  time: { created: T0, updated },
})

/**
 * `GET /session` like the runtime: newest update first, cut at `limit`, `start` = updated ≥.
 * Ties come in ascending id order, the opposite of the gateway's, so a cut through a tie that
 * the paging does not repair shows up as a wrong order or a wrong session.
 */
function memorySource(all: RuntimeSession[]) {
  const requests: Array<{ limit: number; start?: number }> = []
  const source: SessionPageSource = {
    listSessions: async () => [...all],
    listSessionPage: async (page) => {
      requests.push(page)
      return all
        .filter((s) => s.time.updated >= (page.start ?? 0))
        .sort((a, b) => b.time.updated - a.time.updated || (a.id < b.id ? -1 : 1))
        .slice(0, page.limit)
    },
  }
  return { source, requests }
}

/** What the old listing did: verify everything, sort, cut. */
function expected(all: RuntimeSession[], owned: Set<string>, count: number) {
  const mine = all.filter((s) => owned.has(s.id)).sort(newestFirst)
  return { sessions: mine.slice(0, count), more: mine.length > count }
}

/** A deterministic pseudo-random sequence (no flaky seeds). */
function lcg(seed: number): () => number {
  let x = seed
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648
    return x / 2_147_483_648
  }
}

describe('newestOwned', () => {
  it.each([
    // sessions, share owned, distinct update times (few = many ties), count
    [50, 0.5, 50, 10],
    [1_000, 0.02, 1_000, 20],
    [1_000, 0.02, 40, 20],
    [3_000, 0.01, 3_000, 40],
    [3_000, 0.3, 100, 60],
    [500, 0, 500, 20],
    [500, 1, 7, 100],
  ])(
    'gives what filtering and sorting the full listing gives (%i sessions, %f owned, %i times, first %i)',
    async (total, share, times, count) => {
      const random = lcg(total * 31 + times)
      const all = Array.from({ length: total }, (_, n) => session(n, T0 + Math.floor(random() * times)))
      const owned = new Set(all.filter(() => random() < share).map((s) => s.id))
      const { source } = memorySource(all)
      for (const c of [0, 1, count, count * 3, owned.size, owned.size - 1]) {
        if (c < 0) continue
        expect(await newestOwned(source, async (s) => owned.has(s.id), c)).toEqual(expected(all, owned, c))
      }
    },
  )

  it.each([1, 7, 64])(
    'stops verifying mid-page at the same answer, %i records at a time, through many ties',
    async (verifyChunk) => {
      const random = lcg(verifyChunk)
      const all = Array.from({ length: 2_000 }, (_, n) => session(n, T0 + Math.floor(random() * 60)))
      const owned = new Set(all.filter(() => random() < 0.2).map((s) => s.id))
      const { source } = memorySource(all)
      for (const count of [0, 5, 30, 90, 300, 500])
        expect(await newestOwned(source, async (s) => owned.has(s.id), count, { verifyChunk })).toEqual(
          expected(all, owned, count),
        )
    },
  )

  it('stops after one small page when the newest sessions are the caller’s, verifying only what it needs', async () => {
    const all = Array.from({ length: 5_000 }, (_, n) => session(n, T0 + n))
    const owned = new Set(all.slice(-30).map((s) => s.id))
    const { source, requests } = memorySource(all)
    let verified = 0
    const page = await newestOwned(
      source,
      async (s) => {
        verified++
        return owned.has(s.id)
      },
      20,
    )
    expect(page).toEqual(expected(all, owned, 20))
    expect(page.more).toBe(true)
    expect(requests).toEqual([{ limit: 200 }])
    expect(verified).toBeLessThanOrEqual(256)
  })

  it('without the probe reads everything once, and tells when everything was read', async () => {
    const all = Array.from({ length: 5_000 }, (_, n) => session(n, T0 + n))
    const owned = new Set(all.filter((_, n) => n % 100 === 0).map((s) => s.id))
    const { source, requests } = memorySource(all)
    let full = 0
    const onFullListing = () => {
      full++
    }
    expect(
      await newestOwned(source, async (s) => owned.has(s.id), 20, { probe: false, onFullListing }),
    ).toEqual(expected(all, owned, 20))
    expect(requests).toEqual([{ limit: 1_000_000 }])
    expect(full).toBe(1)
    // With the probe: two reads, the second of everything (told); a probe that suffices is not.
    requests.length = 0
    await newestOwned(source, async (s) => owned.has(s.id), 20, { onFullListing })
    expect(requests).toEqual([{ limit: 200 }, { limit: 1_000_000 }])
    expect(full).toBe(2)
    const newest = new Set(all.slice(-30).map((s) => s.id))
    await newestOwned(source, async (s) => newest.has(s.id), 20, { onFullListing })
    expect(full).toBe(2)
  })

  it('finds owned sessions past the first page with one more read of everything (never a third)', async () => {
    const all = Array.from({ length: 5_000 }, (_, n) => session(n, T0 + n))
    // Every 100th session is owned: 21 of them reach 2 100 sessions deep.
    const owned = new Set(all.filter((_, n) => n % 100 === 0).map((s) => s.id))
    const { source, requests } = memorySource(all)
    expect(await newestOwned(source, async (s) => owned.has(s.id), 20)).toEqual(expected(all, owned, 20))
    expect(requests).toEqual([{ limit: 200 }, { limit: 1_000_000 }])
    // A later page (offset 40 + limit 20) reads the same two pages.
    requests.length = 0
    expect(await newestOwned(source, async (s) => owned.has(s.id), 60)).toEqual(expected(all, owned, 60))
    expect(requests).toEqual([{ limit: 244 }, { limit: 1_000_000 }])
  })

  it('repairs a probe cut through sessions updated in the same millisecond (enough owned: reads from that millisecond on)', async () => {
    // 190 newer sessions, then 30 updated in one millisecond: the 200-session probe ends inside
    // that tie with the 10 lowest ids of it (the runtime's tie order), the gateway wants the highest.
    const newer = Array.from({ length: 190 }, (_, n) => session(n, T0 + 1_000 + n))
    const tied = Array.from({ length: 30 }, (_, n) => session(1_000 + n, T0))
    const older = Array.from({ length: 300 }, (_, n) => session(2_000 + n, T0 - 1 - n))
    const all = [...newer, ...tied, ...older]
    const owned = new Set([newer[0], ...tied, older[0]].map((s) => s?.id ?? ''))
    const { source, requests } = memorySource(all)
    const page = await newestOwned(source, async (s) => owned.has(s.id), 3)
    expect(page).toEqual(expected(all, owned, 3))
    expect(page.sessions.map((s) => s.id)).toEqual([newer[0], tied[29], tied[28]].map((s) => s?.id))
    expect(requests).toEqual([{ limit: 200 }, { limit: 400, start: T0 }])
  })

  it('repairs a cut tie when the probe holds too few owned sessions (reads everything)', async () => {
    const newer = Array.from({ length: 199 }, (_, n) => session(n, T0 + 1_000 + n))
    const tied = Array.from({ length: 30 }, (_, n) => session(1_000 + n, T0))
    const older = Array.from({ length: 300 }, (_, n) => session(2_000 + n, T0 - 1 - n))
    const all = [...newer, ...tied, ...older]
    const owned = new Set([...newer.slice(0, 5), ...tied, ...older.slice(0, 3)].map((s) => s.id))
    const { source, requests } = memorySource(all)
    const page = await newestOwned(source, async (s) => owned.has(s.id), 20)
    expect(page).toEqual(expected(all, owned, 20))
    expect(page.sessions[5]?.id).toBe(tied.at(-1)?.id)
    expect(requests).toEqual([{ limit: 200 }, { limit: 1_000_000 }])
  })

  it('falls back to the full listing when a page is not newest first, or the port has no pages', async () => {
    const all = Array.from({ length: 300 }, (_, n) => session(n, T0 + n))
    const owned = new Set(all.filter((_, n) => n % 7 === 0).map((s) => s.id))
    const unsorted: SessionPageSource = {
      listSessions: async () => all,
      listSessionPage: async ({ limit }) => all.slice(0, limit),
    }
    expect(await newestOwned(unsorted, async (s) => owned.has(s.id), 10)).toEqual(expected(all, owned, 10))
    const noPages: SessionPageSource = { listSessions: async () => all }
    expect(await newestOwned(noPages, async (s) => owned.has(s.id), 10)).toEqual(expected(all, owned, 10))
  })

  it('says more only when an owned session exists past the count', async () => {
    const all = Array.from({ length: 400 }, (_, n) => session(n, T0 + n))
    const owned = new Set(all.filter((_, n) => n % 20 === 0).map((s) => s.id))
    const { source } = memorySource(all)
    expect((await newestOwned(source, async (s) => owned.has(s.id), 20)).more).toBe(false)
    expect((await newestOwned(source, async (s) => owned.has(s.id), 19)).more).toBe(true)
  })
})

// ---- end to end over the fake runtime: the real client, adapter, signer and cache ----

const fake = createFakeRuntime()
const server = setupServer(...fake.handlers)
const clients: UpstreamClient[] = []
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => {
  for (const c of clients.splice(0)) c.close()
})
afterAll(() => server.close())

const secret = new Uint8Array(32).fill(3)
const ME = { username: 'me', identity: `id_${'M'.repeat(22)}`, policy: 'full' as const }
const OTHER = { username: 'other', identity: `id_${'O'.repeat(22)}`, policy: 'full' as const }

function gatewaySide(maxEntries?: number) {
  const client = createUpstreamClient(fake.clientOptions)
  clients.push(client)
  const runtime = runtimeFromUpstream(client)
  const inner = createOwnershipSigner({ secret })
  let verifications = 0
  const signer = cachedOwnershipSigner(
    {
      sign: (id, identity) => inner.sign(id, identity),
      verify: (id, identity, record) => {
        verifications++
        return inner.verify(id, identity, record)
      },
    },
    maxEntries === undefined ? {} : { maxEntries },
  )
  const codec = createHandleCodec({ secret })
  const mine = ownedSessions(ME, codec, signer, runtime)
  const theirs = ownedSessions(OTHER, codec, signer, runtime)
  const list = async (count: number) =>
    (await newestOwned(runtime, (s) => mine.isOwned(s), count)).sessions.map((s) => s.id)
  return { runtime, mine, theirs, list, verifications: () => verifications }
}

let tick = T0
beforeEach(() => {
  fake.state.sessions.clear()
  fake.requests.length = 0
})

/** Adds a session through the fake, `updated` one second after the previous one. */
function addAt(metadata?: Record<string, unknown>, parentID?: string): string {
  tick += 1_000
  const s = fake.addSession({ ...(metadata && { metadata }), ...(parentID && { parentID }) })
  fake.state.sessions.set(s.id, { ...s, time: { created: tick, updated: tick } })
  return s.id
}
async function addOwned(owned: ReturnType<typeof ownedSessions>): Promise<string> {
  const id = addAt()
  const current = fake.state.sessions.get(id)
  if (current) fake.state.sessions.set(id, { ...current, metadata: await owned.ownershipMetadata(id) })
  return id
}

describe('newestOwned over the fake runtime', () => {
  it('reads the probe page, then everything, when the caller’s sessions lie past it', async () => {
    const gw = gatewaySide()
    const mineIds: string[] = []
    for (let i = 0; i < 600; i++) {
      if (i % 25 === 0) mineIds.push(await addOwned(gw.mine))
      else if (i % 3 === 0) await addOwned(gw.theirs)
      else addAt()
    }
    fake.requests.length = 0
    expect(await gw.list(20)).toEqual([...mineIds].reverse().slice(0, 20))
    const limits = fake.requests
      .filter((r) => r.path === '/session')
      .map((r) => [r.query.limit, r.query.roots])
    expect(limits).toEqual([
      ['200', 'true'],
      ['1000000', 'true'],
    ])
  })

  it('verifies each record once: a second listing costs no HMAC check', async () => {
    const gw = gatewaySide()
    for (let i = 0; i < 300; i++) await (i % 10 === 0 ? addOwned(gw.mine) : addOwned(gw.theirs))
    const first = await gw.list(20)
    const after = gw.verifications()
    expect(after).toBeGreaterThan(0)
    expect(await gw.list(20)).toEqual(first)
    expect(gw.verifications()).toBe(after)
  })

  it('stays correct with a cache smaller than the listing (verdicts evicted are verified again)', async () => {
    const gw = gatewaySide(8)
    const mineIds: string[] = []
    for (let i = 0; i < 250; i++)
      if (i % 5 === 0) mineIds.push(await addOwned(gw.mine))
      else await addOwned(gw.theirs)
    const expectedIds = [...mineIds].reverse().slice(0, 20)
    expect(await gw.list(20)).toEqual(expectedIds)
    const before = gw.verifications()
    expect(await gw.list(20)).toEqual(expectedIds)
    expect(gw.verifications()).toBeGreaterThan(before)
  })

  it('drops a listed session whose record is tampered with, and takes it back when the valid one returns', async () => {
    const gw = gatewaySide()
    const a = await addOwned(gw.mine)
    const b = await addOwned(gw.mine)
    expect(await gw.list(20)).toEqual([b, a])
    const valid = fake.state.sessions.get(a)?.metadata as { sallyport: { v: 1; mac: string } }
    const mac = valid.sallyport.mac
    const tampered = { sallyport: { v: 1, mac: `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}` } }
    const set = (id: string, metadata: Record<string, unknown>) => {
      const s = fake.state.sessions.get(id)
      if (s) fake.state.sessions.set(id, { ...s, metadata })
    }
    set(a, tampered)
    expect(await gw.list(20)).toEqual([b])
    // A's valid record copied onto another session (what a fork or an attacker could write).
    const c = addAt(structuredClone(valid))
    expect(await gw.list(20)).toEqual([b])
    set(a, valid)
    expect(await gw.list(20)).toEqual([b, a])
    expect(fake.state.sessions.has(c)).toBe(true)
  })

  it('never lists another credential’s sessions or a subagent session', async () => {
    const gw = gatewaySide()
    const a = await addOwned(gw.mine)
    await addOwned(gw.theirs)
    const child = addAt(undefined, a)
    const current = fake.state.sessions.get(child)
    if (current)
      fake.state.sessions.set(child, { ...current, metadata: await gw.mine.ownershipMetadata(child) })
    expect(await gw.list(20)).toEqual([a])
  })
})
