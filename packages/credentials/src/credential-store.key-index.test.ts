import { describe, expect, it, vi } from 'vitest'
import { codeOf, tempStateDir } from '../test/helpers.ts'
import { createCredentialStore } from './credential-store.ts'
import * as keyMatcher from './key-matcher.ts'

// Pass-through spy: the store must ask the resolver's key index, not compare digests itself.
vi.mock('./key-matcher.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('./key-matcher.ts')>()
  return { ...original, buildKeyIndex: vi.fn(original.buildKeyIndex) }
})

describe('key reuse check', () => {
  it('refuses, through the key index, a key another credential uses (add and rotate)', async () => {
    const store = createCredentialStore({ stateDir: await tempStateDir() })
    const alice = await store.add('alice', 'chat')
    const bob = await store.add('bob', 'read')
    const buildKeyIndex = vi.mocked(keyMatcher.buildKeyIndex)
    buildKeyIndex.mockClear()
    expect(await codeOf(() => store.add('carol', 'chat', { key: alice.key }))).toBe(
      'ERR_CREDENTIALS_KEY_IN_USE',
    )
    expect(await codeOf(() => store.rotate('alice', { key: bob.key }))).toBe('ERR_CREDENTIALS_KEY_IN_USE')
    expect(buildKeyIndex).toHaveBeenCalledTimes(2)
    // The rotated credential itself is left out of the index.
    expect(buildKeyIndex.mock.calls[1]?.[0].map((entry) => entry.username)).toEqual(['bob'])
    const key = 'fresh-operator-key-0123456789-abcdefgh'
    expect((await store.rotate('alice', { key })).key).toBe(key)
    expect(await store.list()).toHaveLength(2)
  })
})
