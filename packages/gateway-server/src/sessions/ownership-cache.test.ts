import { createOwnershipSigner } from '@sallyport/handles'
import { describe, expect, it, vi } from 'vitest'
import type { OwnershipSignerLike } from './owned.js'
import { cachedOwnershipSigner } from './ownership-cache.js'

const secret = new Uint8Array(32).fill(9)
const ME = `id_${'M'.repeat(22)}`
const OTHER = `id_${'O'.repeat(22)}`
const ses = (n: number): string => `ses_${String(n).padStart(26, '0')}`

/** The real signer behind a spy, and the cache over it. */
function setup(maxEntries?: number) {
  const real = createOwnershipSigner({ secret })
  const verify = vi.fn((id: string, identity: string, record: unknown) => real.verify(id, identity, record))
  const inner: OwnershipSignerLike = { sign: (id, identity) => real.sign(id, identity), verify }
  const cached = cachedOwnershipSigner(inner, maxEntries === undefined ? {} : { maxEntries })
  return { real, verify, cached }
}

describe('cachedOwnershipSigner', () => {
  it('verifies a (session, record) once per credential and answers repeats from the cache', async () => {
    const { real, verify, cached } = setup()
    const record = await real.sign(ses(1), ME)
    const forged = { v: 1, mac: 'A'.repeat(43) }
    for (let i = 0; i < 3; i++) {
      expect(await cached.verify(ses(1), ME, record)).toBe(true)
      expect(await cached.verify(ses(2), ME, forged)).toBe(false)
    }
    expect(verify).toHaveBeenCalledTimes(2)
  })

  it('never lets a changed record ride on the verdict for the old one', async () => {
    const { real, verify, cached } = setup()
    const record = (await real.sign(ses(1), ME)) as { v: 1; mac: string }
    expect(await cached.verify(ses(1), ME, record)).toBe(true)
    // Another record in the same session's metadata: one character of the MAC, or the version.
    const flipped = { v: 1, mac: `${record.mac.slice(0, -1)}${record.mac.endsWith('A') ? 'B' : 'A'}` }
    expect(await cached.verify(ses(1), ME, flipped)).toBe(false)
    expect(await cached.verify(ses(1), ME, { v: 2, mac: record.mac })).toBe(false)
    // And back: the valid record is valid again (verified afresh, as the entry was replaced).
    expect(await cached.verify(ses(1), ME, record)).toBe(true)
    expect(verify).toHaveBeenCalledTimes(4)
  })

  it('turns a refused session into an owned one when a valid record is written (a fork)', async () => {
    const { real, cached } = setup()
    const parent = await real.sign(ses(1), ME)
    // The fork carries the parent's record: bound to another id, refused (and cached as such).
    expect(await cached.verify(ses(2), ME, parent)).toBe(false)
    expect(await cached.verify(ses(2), ME, await real.sign(ses(2), ME))).toBe(true)
  })

  it('keeps verdicts per credential: a record valid for one is not for another', async () => {
    const { real, cached } = setup()
    const record = await real.sign(ses(1), ME)
    expect(await cached.verify(ses(1), ME, record)).toBe(true)
    expect(await cached.verify(ses(1), OTHER, record)).toBe(false)
    expect(await cached.verify(ses(1), ME, record)).toBe(true)
  })

  it('never copies a record onto another session', async () => {
    const { real, cached } = setup()
    const record = await real.sign(ses(1), ME)
    expect(await cached.verify(ses(1), ME, record)).toBe(true)
    expect(await cached.verify(ses(3), ME, structuredClone(record))).toBe(false)
  })

  it('holds at most maxEntries verdicts, dropping the least recently used', async () => {
    const { real, verify, cached } = setup(2)
    const records = await Promise.all([1, 2, 3].map((n) => real.sign(ses(n), ME)))
    const check = (n: number) => cached.verify(ses(n), ME, records[n - 1])
    await check(1)
    await check(2)
    await check(1) // hit: 1 is now the most recently used
    await check(3) // evicts 2
    expect(verify).toHaveBeenCalledTimes(3)
    await check(1)
    await check(3)
    expect(verify).toHaveBeenCalledTimes(3)
    expect(await check(2)).toBe(true)
    expect(verify).toHaveBeenCalledTimes(4)
  })

  it('caches nothing with maxEntries 0 and refuses a bad maxEntries when created', async () => {
    const { real, verify, cached } = setup(0)
    const record = await real.sign(ses(1), ME)
    await cached.verify(ses(1), ME, record)
    await cached.verify(ses(1), ME, record)
    expect(verify).toHaveBeenCalledTimes(2)
    for (const maxEntries of [-1, 1.5, Number.NaN])
      expect(() => cachedOwnershipSigner(real, { maxEntries })).toThrow(RangeError)
  })

  it('primes the cache when signing: a record the gateway just wrote needs no HMAC check', async () => {
    const { verify, cached } = setup()
    const record = await cached.sign(ses(5), ME)
    expect(await cached.verify(ses(5), ME, record)).toBe(true)
    expect(verify).not.toHaveBeenCalled()
  })

  it.each([
    ['undefined', undefined],
    ['an extra key', { v: 1, mac: 'A'.repeat(43), owner: 'me' }],
    ['a numeric mac', { v: 1, mac: 7 }],
    ['an array', [1, 'A'.repeat(43)]],
    [
      'throwing getters',
      Object.defineProperty({ v: 1 }, 'mac', {
        enumerable: true,
        get() {
          throw new Error('boom')
        },
      }),
    ],
  ])('hands a record with %s to the signer uncached (refused)', async (_label, record) => {
    const { verify, cached } = setup()
    expect(await cached.verify(ses(1), ME, record)).toBe(false)
    expect(await cached.verify(ses(1), ME, record)).toBe(false)
    expect(verify).toHaveBeenCalledTimes(2)
  })

  it('verifies the very copy it keys on, not an object that changes between reads', async () => {
    const { real, verify, cached } = setup()
    const valid = (await real.sign(ses(1), ME)) as { v: 1; mac: string }
    let reads = 0
    // First read a forged MAC (what the cache would key on), then the valid one.
    const shifty = new Proxy(
      { v: 1, mac: valid.mac },
      { get: (target, key) => (key === 'mac' && reads++ === 0 ? 'B'.repeat(43) : Reflect.get(target, key)) },
    )
    expect(await cached.verify(ses(1), ME, shifty)).toBe(false)
    expect(verify.mock.calls[0]?.[2]).toEqual({ v: 1, mac: 'B'.repeat(43) })
    expect(await cached.verify(ses(1), ME, valid)).toBe(true)
  })
})
