import { readFile, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { codeOf, pollUntil, tempStateDir } from '../test/helpers.ts'
import { createCredentialStore } from './credential-store.ts'
import type { CredentialError } from './errors.ts'
import { createKeyResolver, type KeyResolverOptions } from './key-resolver.ts'

const ISSUER = 'https://login.example.com'

async function setup(options: Partial<KeyResolverOptions> = {}) {
  const stateDir = await tempStateDir()
  const store = createCredentialStore({ stateDir })
  // A second instance stands for another process (the CLI) changing the store.
  const other = createCredentialStore({ stateDir })
  const errors: CredentialError[] = []
  const resolver = createKeyResolver({ stateDir, onReloadError: (error) => errors.push(error), ...options })
  onTestFinished(() => resolver.close())
  return { stateDir, store, other, resolver, errors, root: join(stateDir, 'credentials') }
}

describe('createKeyResolver', () => {
  it('rejects bad options when it is created', () => {
    expect(() => createKeyResolver({ stateDir: '' })).toThrow(TypeError)
    expect(() => createKeyResolver({ stateDir: 'x', reloadIntervalMs: 0 })).toThrow(RangeError)
    expect(() => createKeyResolver({ stateDir: 'x', reloadIntervalMs: 5_000 })).toThrow(RangeError)
  })
})

describe('resolve', () => {
  it('resolves each configured key to its own principal', async () => {
    const { store, resolver } = await setup()
    const alice = await store.add('alice', 'full')
    const bob = await store.add('bob', 'chat')
    expect(await resolver.resolve(alice.key)).toEqual({
      ok: true,
      principal: { username: 'alice', identity: alice.identity, policy: 'full' },
    })
    expect(await resolver.resolve(bob.key)).toMatchObject({
      ok: true,
      principal: { username: 'bob', policy: 'chat' },
    })
  })

  it('answers concurrent first calls of a fresh resolver, all from the first read', async () => {
    const { store, resolver } = await setup()
    const alice = await store.add('alice', 'full')
    const results = await Promise.all(Array.from({ length: 8 }, () => resolver.resolve(alice.key)))
    for (const result of results) expect(result).toMatchObject({ ok: true, principal: { username: 'alice' } })
  })

  it.each([
    ['a missing', () => undefined, 'ERR_CREDENTIALS_MISSING'],
    ['an empty', () => '', 'ERR_CREDENTIALS_MISSING'],
    ['a weak', () => 'x'.repeat(31), 'ERR_CREDENTIALS_WEAK'],
    ['a malformed', (key: string) => `${key}\n`, 'ERR_CREDENTIALS_MALFORMED'],
    ['an unknown', () => 'u'.repeat(47), 'ERR_CREDENTIALS_UNKNOWN'],
    ['a one-character-changed', (key: string) => `${key.slice(0, -1)}!`, 'ERR_CREDENTIALS_UNKNOWN'],
  ])('refuses %s key', async (_name, present, code) => {
    const { store, resolver } = await setup()
    const alice = await store.add('alice', 'full')
    expect(await resolver.resolve(present(alice.key))).toMatchObject({ ok: false, code })
  })

  it('refuses a key configured for two usernames, for both of them', async () => {
    const { store, resolver, root } = await setup()
    const alice = await store.add('alice', 'full')
    const bob = await store.add('bob', 'chat')
    // The store refuses to create duplicates; an operator can still write a key file by hand.
    await writeFile(join(root, 'bob/key'), alice.key)
    expect(await resolver.resolve(alice.key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_DUPLICATED' })
    expect(await resolver.resolve(bob.key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
  })

  it('refuses every key of an empty or absent store', async () => {
    const { resolver } = await setup()
    expect(await resolver.resolve('k'.repeat(40))).toMatchObject({
      ok: false,
      code: 'ERR_CREDENTIALS_UNKNOWN',
    })
  })

  it('throws ERR_CREDENTIALS_CORRUPT when the store was never readable, instead of refusing every key', async () => {
    const { store, resolver, root } = await setup()
    const alice = await store.add('alice', 'full')
    await writeFile(join(root, 'alice/meta.json'), 'nope')
    expect(await codeOf(() => resolver.resolve(alice.key))).toBe('ERR_CREDENTIALS_CORRUPT')
  })
})

describe('hot reload', () => {
  it.each([
    ['by polling the generation file', false],
    ['with fs.watch as a hint', true],
  ])('sees a credential added by another store instance within 2 s (%s)', async (_name, watch) => {
    const { store, other, resolver } = await setup({ watch })
    await store.add('alice', 'full')
    const newcomer = 'n'.repeat(40)
    expect(await resolver.resolve(newcomer)).toMatchObject({ code: 'ERR_CREDENTIALS_UNKNOWN' })
    await other.add('bob', 'read', { key: newcomer })
    const elapsed = await pollUntil(async () => (await resolver.resolve(newcomer)).ok, {
      timeoutMs: 2_000,
      what: 'new credential resolves',
    })
    expect(elapsed).toBeLessThan(2_000)
  })

  it('stops accepting the old key after a rotation elsewhere and accepts the new one with the same identity', async () => {
    const { store, other, resolver } = await setup({ watch: false })
    const added = await store.add('alice', 'full')
    expect((await resolver.resolve(added.key)).ok).toBe(true)
    const rotated = await other.rotate('alice')
    await pollUntil(async () => !(await resolver.resolve(added.key)).ok, {
      timeoutMs: 2_000,
      what: 'old key refused',
    })
    expect(await resolver.resolve(added.key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    expect(await resolver.resolve(rotated.key)).toEqual({
      ok: true,
      principal: { username: 'alice', identity: added.identity, policy: 'full' },
    })
  })

  it('answers concurrent first uses of a rotated key from the reload they wait for (review finding: 7 of 8 got 401)', async () => {
    const { store, other, resolver } = await setup({ watch: false, reloadIntervalMs: 100 })
    const added = await store.add('alice', 'full')
    expect((await resolver.resolve(added.key)).ok).toBe(true)
    const rotated = await other.rotate('alice')
    // Past the reload interval (the state a gateway is in after any quiet moment; there is no
    // event for it), the first call starts the reload; the other seven must wait for it.
    await new Promise((resolve) => setTimeout(resolve, 150))
    const results = await Promise.all(Array.from({ length: 8 }, () => resolver.resolve(rotated.key)))
    expect(results.map((r) => r.ok)).toEqual(Array(8).fill(true))
  })

  it('applies a policy change and a removal made elsewhere within 2 s', async () => {
    const { store, other, resolver } = await setup({ watch: false })
    const added = await store.add('alice', 'chat')
    expect(await resolver.resolve(added.key)).toMatchObject({ principal: { policy: 'chat' } })
    await other.setPolicy('alice', 'full')
    await pollUntil(
      async () => {
        const result = await resolver.resolve(added.key)
        return result.ok && result.principal.policy === 'full'
      },
      { timeoutMs: 2_000, what: 'policy change seen' },
    )
    await other.remove('alice')
    await pollUntil(async () => !(await resolver.resolve(added.key)).ok, {
      timeoutMs: 2_000,
      what: 'removal seen',
    })
  })

  it('leaves out a credential directory damaged on reload, reports it once, loads the rest, and recovers', async () => {
    const { store, other, resolver, errors, root } = await setup({ watch: false, reloadIntervalMs: 20 })
    const alice = await store.add('alice', 'full')
    const bob = await store.add('bob', 'chat')
    expect((await resolver.resolve(alice.key)).ok).toBe(true)
    const goodMeta = await readFile(join(root, 'bob/meta.json'), 'utf8')
    await writeFile(join(root, 'bob/meta.json'), '{"broken":')
    const carol = await other.add('carol', 'read')
    // The rest of the store loads: carol is known, the damaged bob is refused (fails closed).
    await pollUntil(async () => (await resolver.resolve(carol.key)).ok, {
      timeoutMs: 2_000,
      what: 'new credential seen despite a damaged one',
    })
    expect(await resolver.resolve(bob.key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    expect((await resolver.resolve(alice.key)).ok).toBe(true)
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      expect((await resolver.resolve(alice.key)).ok).toBe(true)
    }
    expect(errors).toHaveLength(1)
    expect(errors[0]?.code).toBe('ERR_CREDENTIALS_CORRUPT')
    expect(errors[0]?.message).toContain('credentials/bob/meta.json')
    // The repair is picked up without a mutation.
    await writeFile(join(root, 'bob/meta.json'), goodMeta)
    await pollUntil(async () => (await resolver.resolve(bob.key)).ok, {
      timeoutMs: 2_000,
      what: 'recovery',
    })
    expect(errors).toHaveLength(1)
  })

  it('keeps the last good snapshot when the store cannot be read at all, reports it once, and recovers', async () => {
    const { store, other, resolver, errors, root } = await setup({ watch: false, reloadIntervalMs: 20 })
    const alice = await store.add('alice', 'full')
    expect((await resolver.resolve(alice.key)).ok).toBe(true)
    // credentials/ becomes a symlink loop: neither the generation nor the listing can be read.
    await rename(root, `${root}.real`)
    await symlink('credentials', root)
    await pollUntil(
      async () => {
        await resolver.resolve(alice.key)
        return errors.length > 0
      },
      { timeoutMs: 2_000, what: 'reload failure reported' },
    )
    const count = errors.length
    for (let i = 0; i < 5; i++) {
      expect((await resolver.resolve(alice.key)).ok).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(errors).toHaveLength(count)
    expect(errors.every((error) => error.code === 'ERR_CREDENTIALS_IO')).toBe(true)
    await unlink(root)
    await rename(`${root}.real`, root)
    const bob = await other.add('bob', 'read')
    await pollUntil(async () => (await resolver.resolve(bob.key)).ok, { timeoutMs: 2_000, what: 'recovery' })
  })

  it('applies a removal made elsewhere while an unrelated credential directory is damaged', async () => {
    const { store, other, resolver, errors, root } = await setup({ watch: false })
    await store.add('alice', 'full')
    const bob = await store.add('bob', 'chat')
    expect((await resolver.resolve(bob.key)).ok).toBe(true)
    await writeFile(join(root, 'alice/meta.json'), 'not json')
    // bob's key leaked: the operator removes it from another process.
    await other.remove('bob')
    await pollUntil(async () => (await resolver.resolve(bob.key)).ok === false, {
      timeoutMs: 2_000,
      what: 'removed key refused',
    })
    expect(await resolver.resolve(bob.key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    expect(errors.map((error) => error.code)).toEqual(['ERR_CREDENTIALS_CORRUPT'])
  })

  it('applies a rotation made elsewhere while an unrelated credential directory is damaged', async () => {
    const { store, other, resolver, errors, root } = await setup({ watch: false })
    await store.add('alice', 'full')
    const bob = await store.add('bob', 'chat')
    expect((await resolver.resolve(bob.key)).ok).toBe(true)
    await rm(join(root, 'alice/meta.json'))
    const rotated = await other.rotate('bob')
    await pollUntil(async () => (await resolver.resolve(rotated.key)).ok, {
      timeoutMs: 2_000,
      what: 'rotation seen',
    })
    expect(await resolver.resolve(bob.key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    expect(errors).toHaveLength(1)
    expect(errors[0]?.message).toContain('credentials/alice/meta.json')
  })

  it('does not re-read the store while the generation is unchanged', async () => {
    const { store, resolver, root } = await setup({ watch: false, reloadIntervalMs: 10 })
    const alice = await store.add('alice', 'full')
    expect((await resolver.resolve(alice.key)).ok).toBe(true)
    // A hand edit without a mutation does not bump the generation, so it stays unseen.
    await writeFile(join(root, 'alice/key'), 'h'.repeat(40))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await resolver.resolve(alice.key)).ok).toBe(true)
  })
})

describe('resolveOAuth', () => {
  it('resolves a mapped (issuer, subject) pair to the credential and nothing else', async () => {
    const { store, resolver } = await setup()
    const alice = await store.add('alice', 'read')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    expect(await resolver.resolveOAuth(ISSUER, 'sub-1')).toEqual({
      username: 'alice',
      identity: alice.identity,
      policy: 'read',
    })
    expect(await resolver.resolveOAuth(ISSUER, 'sub-2')).toBeUndefined()
    expect(await resolver.resolveOAuth(`${ISSUER}/`, 'sub-1')).toBeUndefined()
    expect(await resolver.resolveOAuth('https://evil.example', 'sub-1')).toBeUndefined()
  })

  it('stops resolving a subject once its credential is removed elsewhere', async () => {
    const { store, other, resolver } = await setup({ watch: false })
    await store.add('alice', 'read')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    expect(await resolver.resolveOAuth(ISSUER, 'sub-1')).toBeDefined()
    await other.remove('alice')
    await other.add('alice', 'full')
    await pollUntil(async () => (await resolver.resolveOAuth(ISSUER, 'sub-1')) === undefined, {
      timeoutMs: 2_000,
      what: 'mapping gone',
    })
  })

  it('treats an oauth-map.json damaged on reload as no mappings, reports it, and still loads credentials', async () => {
    const { store, other, resolver, errors, root } = await setup({ watch: false })
    const alice = await store.add('alice', 'read')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    expect(await resolver.resolveOAuth(ISSUER, 'sub-1')).toBeDefined()
    await writeFile(join(root, 'oauth-map.json'), '{"version":1,')
    await other.setPolicy('alice', 'full')
    await pollUntil(
      async () => {
        const result = await resolver.resolve(alice.key)
        return result.ok && result.principal.policy === 'full'
      },
      { timeoutMs: 2_000, what: 'policy change seen' },
    )
    expect(await resolver.resolveOAuth(ISSUER, 'sub-1')).toBeUndefined()
    expect(errors).toHaveLength(1)
    expect(errors[0]?.code).toBe('ERR_CREDENTIALS_CORRUPT')
    expect(errors[0]?.message).toContain('credentials/oauth-map.json')
  })

  it('throws when oauth-map.json is damaged before the first read', async () => {
    const { store, resolver, root } = await setup()
    const alice = await store.add('alice', 'read')
    await writeFile(join(root, 'oauth-map.json'), 'nope')
    expect(await codeOf(() => resolver.resolve(alice.key))).toBe('ERR_CREDENTIALS_CORRUPT')
    expect(await codeOf(() => resolver.resolveOAuth(ISSUER, 'sub-1'))).toBe('ERR_CREDENTIALS_CORRUPT')
  })

  it('ignores a hand-written mapping to a username that does not exist', async () => {
    const { store, resolver, root } = await setup()
    await store.add('alice', 'read')
    await writeFile(
      join(root, 'oauth-map.json'),
      JSON.stringify({ version: 1, mappings: [{ issuer: ISSUER, subject: 's', username: 'ghost' }] }),
    )
    expect(await resolver.resolveOAuth(ISSUER, 's')).toBeUndefined()
  })
})
