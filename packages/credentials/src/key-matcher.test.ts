import { beforeEach, describe, expect, it, vi } from 'vitest'

const compared = vi.hoisted(() => ({ calls: 0, lengths: new Set<number>() }))
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>()
  return {
    ...original,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      compared.calls++
      compared.lengths.add(a.byteLength).add(b.byteLength)
      return original.timingSafeEqual(a, b)
    },
  }
})

const { buildKeyIndex, digestKey } = await import('./key-matcher.ts')

const alice = {
  username: 'alice',
  identity: 'id_AAAAAAAAAAAAAAAAAAAAAA',
  policy: 'full' as const,
  key: 'a'.repeat(40),
}
const bob = {
  username: 'bob',
  identity: 'id_BBBBBBBBBBBBBBBBBBBBBB',
  policy: 'chat' as const,
  key: 'b'.repeat(40),
}
const carol = {
  username: 'carol',
  identity: 'id_CCCCCCCCCCCCCCCCCCCCCC',
  policy: 'read' as const,
  key: 'c'.repeat(300),
}
const dave = {
  username: 'dave',
  identity: 'id_DDDDDDDDDDDDDDDDDDDDDD',
  policy: 'read' as const,
  key: bob.key,
}

beforeEach(() => {
  compared.calls = 0
  compared.lengths.clear()
})

describe('buildKeyIndex', () => {
  const index = buildKeyIndex([alice, bob, carol, dave])

  it.each([
    ['missing (undefined)', undefined, 'ERR_CREDENTIALS_MISSING'],
    ['missing (empty)', '', 'ERR_CREDENTIALS_MISSING'],
    ['weak (too short)', 'a'.repeat(31), 'ERR_CREDENTIALS_WEAK'],
    ['weak (too long)', 'a'.repeat(513), 'ERR_CREDENTIALS_WEAK'],
    ['malformed (space)', `${alice.key} `, 'ERR_CREDENTIALS_MALFORMED'],
    ['malformed (control)', `${alice.key}\u0001`, 'ERR_CREDENTIALS_MALFORMED'],
    ['malformed (non-ASCII)', `${alice.key}ü`, 'ERR_CREDENTIALS_MALFORMED'],
    ['unknown', 'z'.repeat(40), 'ERR_CREDENTIALS_UNKNOWN'],
    ['unknown (prefix of a key)', 'a'.repeat(39), 'ERR_CREDENTIALS_UNKNOWN'],
    ['duplicated (shared by bob and dave)', bob.key, 'ERR_CREDENTIALS_DUPLICATED'],
  ])('refuses a key that is %s', (_name, key, code) => {
    const result = index.match(key)
    expect(result).toMatchObject({ ok: false, code })
    if (!result.ok && key) expect(result.message).not.toContain(key)
  })

  it.each([
    [alice.key, alice],
    [carol.key, carol],
  ])('resolves a configured key to its principal', (key, expected) => {
    expect(index.match(key)).toEqual({
      ok: true,
      principal: { username: expected.username, identity: expected.identity, policy: expected.policy },
    })
  })

  it('returns a frozen principal without the key', () => {
    const result = index.match(alice.key)
    expect(result.ok && Object.isFrozen(result.principal)).toBe(true)
    expect(JSON.stringify(result)).not.toContain(alice.key)
  })

  it('compares against every configured digest even when the first one matches', () => {
    expect(index.match(alice.key).ok).toBe(true)
    expect(compared.calls).toBe(4)
  })

  it('compares fixed 32-byte digests whatever the presented length', () => {
    index.match('q'.repeat(500))
    index.match('q'.repeat(32))
    expect(compared.calls).toBe(8)
    expect([...compared.lengths]).toEqual([32])
  })

  it('does not compare keys that fail the format checks', () => {
    index.match('short')
    expect(compared.calls).toBe(0)
  })

  it('refuses everything when no key is configured', () => {
    expect(buildKeyIndex([]).match(alice.key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
  })

  it('digests with SHA-256', () => {
    expect(digestKey('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    )
  })
})
