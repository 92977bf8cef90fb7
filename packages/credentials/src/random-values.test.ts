import { describe, expect, it } from 'vitest'
import { checkKey } from './check-key.ts'
import { generateIdentity, generateKey, takeRandom } from './random-values.ts'
import { IDENTITY_PATTERN } from './schemas.ts'

describe('generateKey', () => {
  it('encodes 32 random bytes (256 bits) behind the agk_ prefix', () => {
    const bytes = Buffer.alloc(32, 0xab)
    const key = generateKey((size) => (size === 32 ? bytes : Buffer.alloc(size)))
    expect(key).toBe(`agk_${bytes.toString('base64url')}`)
    expect(Buffer.from(key.slice(4), 'base64url')).toHaveLength(32)
  })

  it('produces keys that pass the key rules and differ each time', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateKey()))
    expect(keys.size).toBe(200)
    for (const key of keys) expect(checkKey(key)).toEqual({ ok: true })
  })

  it('throws RangeError when the random source returns too few bytes', () => {
    expect(() => generateKey(() => new Uint8Array(16))).toThrow(RangeError)
  })
})

describe('generateIdentity', () => {
  it('encodes 128 random bits behind the id_ prefix', () => {
    const identity = generateIdentity()
    expect(identity).toMatch(IDENTITY_PATTERN)
    expect(Buffer.from(identity.slice(3), 'base64url')).toHaveLength(16)
  })

  it('differs each time', () => {
    expect(new Set(Array.from({ length: 200 }, () => generateIdentity())).size).toBe(200)
  })
})

describe('takeRandom', () => {
  it('returns a copy of exactly the requested bytes', () => {
    const bytes = new Uint8Array(8).fill(7)
    const taken = takeRandom(() => bytes, 8)
    expect(taken).toEqual(Buffer.from(bytes))
    bytes.fill(0)
    expect(taken[0]).toBe(7)
  })

  it.each([
    ['too few bytes', () => new Uint8Array(7)],
    ['too many bytes', () => new Uint8Array(9)],
    ['not a Uint8Array', () => Array.from({ length: 8 }, () => 1) as unknown as Uint8Array],
  ])('throws RangeError for a source returning %s', (_name, source) => {
    expect(() => takeRandom(source, 8)).toThrow(RangeError)
  })
})
