import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, seededRandom, tempStateDir } from '../test/helpers.ts'
import { createCredentialStore, MAX_CREDENTIALS } from './credential-store.ts'
import { IDENTITY_PATTERN } from './schemas.ts'

const ISSUER = 'https://login.example.com'

async function setup(options: { now?: () => number } = {}) {
  const stateDir = await tempStateDir()
  const store = createCredentialStore({ stateDir, ...options })
  return { stateDir, store, root: join(stateDir, 'credentials') }
}

async function mode(path: string): Promise<string> {
  return ((await stat(path)).mode & 0o777).toString(8)
}

describe('createCredentialStore', () => {
  it('rejects bad options when it is created, not on first use', () => {
    expect(() => createCredentialStore({ stateDir: '' })).toThrow(TypeError)
    expect(() => createCredentialStore({ stateDir: 'x', lockTimeoutMs: 0 })).toThrow(RangeError)
    expect(() => createCredentialStore({ stateDir: 'x', staleLockMs: Number.NaN })).toThrow(RangeError)
  })
})

describe('add', () => {
  it('creates a credential with a new identity and returns the generated key once', async () => {
    const { store, stateDir } = await setup({ now: () => Date.UTC(2030, 0, 2) })
    const added = await store.add('alice', 'read')
    expect(added.username).toBe('alice')
    expect(added.policy).toBe('read')
    expect(added.identity).toMatch(IDENTITY_PATTERN)
    expect(added.key).toMatch(/^agk_[A-Za-z0-9_-]{43}$/)
    expect(await readFile(join(stateDir, 'credentials/alice/key'), 'utf8')).toBe(added.key)
    expect(await store.get('alice')).toEqual({
      username: 'alice',
      identity: added.identity,
      policy: 'read',
      createdAt: '2030-01-02T00:00:00.000Z',
      updatedAt: '2030-01-02T00:00:00.000Z',
      rotatedAt: null,
    })
  })

  it('writes key and metadata 0600 inside directories 0700', async () => {
    const { store, root } = await setup()
    await store.add('alice', 'chat')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    expect(await mode(root)).toBe('700')
    expect(await mode(join(root, 'alice'))).toBe('700')
    expect(await mode(join(root, 'alice/key'))).toBe('600')
    expect(await mode(join(root, 'alice/meta.json'))).toBe('600')
    expect(await mode(join(root, 'oauth-map.json'))).toBe('600')
  })

  it('leaves no temporary files and no lock behind', async () => {
    const { store, root } = await setup()
    await store.add('alice', 'chat')
    await store.rotate('alice')
    await store.setPolicy('alice', 'full')
    await store.add('bob', 'chat')
    await store.remove('bob')
    expect((await readdir(root)).sort()).toEqual(['.generation', 'alice'])
    expect((await readdir(join(root, 'alice'))).sort()).toEqual(['key', 'meta.json'])
  })

  it('accepts an operator-supplied key that passes the key rules', async () => {
    const { store } = await setup()
    const key = 'operator-chosen-key-0123456789-abcdef'
    expect((await store.add('alice', 'chat', { key })).key).toBe(key)
  })

  it.each([
    ['too short', 'short'],
    ['with whitespace', `${'k'.repeat(20)} ${'k'.repeat(20)}`],
    ['too long', 'k'.repeat(513)],
  ])('refuses an operator key that is %s with ERR_CREDENTIALS_INVALID_KEY', async (_name, key) => {
    const { store } = await setup()
    expect(await codeOf(() => store.add('alice', 'chat', { key }))).toBe('ERR_CREDENTIALS_INVALID_KEY')
    expect(await store.list()).toEqual([])
  })

  it('refuses an operator key that another credential already uses', async () => {
    const { store } = await setup()
    const { key } = await store.add('alice', 'chat')
    expect(await codeOf(() => store.add('bob', 'chat', { key }))).toBe('ERR_CREDENTIALS_KEY_IN_USE')
  })

  it('refuses an existing username with ERR_CREDENTIALS_EXISTS', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    expect(await codeOf(() => store.add('alice', 'full'))).toBe('ERR_CREDENTIALS_EXISTS')
    expect((await store.get('alice'))?.policy).toBe('chat')
  })

  it.each(['Alice', '..', 'a/b', '', '.lock'])(
    'refuses username %j before touching the disk',
    async (name) => {
      const { store, stateDir } = await setup()
      expect(await codeOf(() => store.add(name, 'chat'))).toBe('ERR_CREDENTIALS_INVALID_USERNAME')
      expect(await codeOf(() => stat(stateDir))).toBe('ENOENT')
    },
  )

  it('refuses an unknown policy with ERR_CREDENTIALS_INVALID_POLICY', async () => {
    const { store } = await setup()
    expect(await codeOf(() => store.add('alice', 'admin' as never))).toBe('ERR_CREDENTIALS_INVALID_POLICY')
  })

  it(`allows ${MAX_CREDENTIALS} credentials and refuses one more with ERR_CREDENTIALS_LIMIT`, async () => {
    const { store } = await setup()
    for (let n = 0; n < MAX_CREDENTIALS; n++) await store.add(`user${n}`, 'chat')
    expect(await store.list()).toHaveLength(MAX_CREDENTIALS)
    expect(await codeOf(() => store.add('onemore', 'chat'))).toBe('ERR_CREDENTIALS_LIMIT')
    await store.remove('user7')
    await expect(store.add('onemore', 'chat')).resolves.toMatchObject({ username: 'onemore' })
  }, 60_000)

  it('derives keys and identities from the injected random source', async () => {
    const one = createCredentialStore({ stateDir: await tempStateDir(), random: seededRandom('x') })
    const two = createCredentialStore({ stateDir: await tempStateDir(), random: seededRandom('x') })
    expect(await one.add('alice', 'chat')).toEqual(await two.add('alice', 'chat'))
  })
})

describe('list and get', () => {
  it('lists every credential sorted by username and never returns a key', async () => {
    const { store } = await setup()
    const keys = [(await store.add('zed', 'chat')).key, (await store.add('amy', 'full')).key]
    const listed = await store.list()
    expect(listed.map((entry) => entry.username)).toEqual(['amy', 'zed'])
    for (const entry of listed) expect(entry).not.toHaveProperty('key')
    const serialised = JSON.stringify([listed, await store.get('amy')])
    for (const key of keys) expect(serialised).not.toContain(key)
  })

  it('returns undefined for an absent credential and an empty list for a fresh state dir', async () => {
    const { store } = await setup()
    expect(await store.get('nobody')).toBeUndefined()
    expect(await store.list()).toEqual([])
  })
})

describe('setPolicy', () => {
  it('changes the policy and keeps identity and key', async () => {
    let clock = Date.UTC(2030, 0, 1)
    const { store, stateDir } = await setup({ now: () => clock })
    const added = await store.add('alice', 'chat')
    clock += 60_000
    const updated = await store.setPolicy('alice', 'full')
    expect(updated).toMatchObject({
      identity: added.identity,
      policy: 'full',
      updatedAt: '2030-01-01T00:01:00.000Z',
    })
    expect(updated.createdAt).toBe('2030-01-01T00:00:00.000Z')
    expect(await readFile(join(stateDir, 'credentials/alice/key'), 'utf8')).toBe(added.key)
  })

  it.each([
    ['an absent credential', 'nobody', 'full', 'ERR_CREDENTIALS_NOT_FOUND'],
    ['an invalid policy', 'alice', 'root', 'ERR_CREDENTIALS_INVALID_POLICY'],
    ['an invalid username', 'ALICE', 'full', 'ERR_CREDENTIALS_INVALID_USERNAME'],
  ])('refuses %s', async (_name, username, policy, code) => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    expect(await codeOf(() => store.setPolicy(username, policy as never))).toBe(code)
  })
})

describe('rotate', () => {
  it('issues a new key with the same identity and policy', async () => {
    const { store, stateDir } = await setup({ now: () => Date.UTC(2031, 5, 6) })
    const added = await store.add('alice', 'read')
    const rotated = await store.rotate('alice')
    expect(rotated).toMatchObject({ username: 'alice', identity: added.identity, policy: 'read' })
    expect(rotated.key).not.toBe(added.key)
    expect(await readFile(join(stateDir, 'credentials/alice/key'), 'utf8')).toBe(rotated.key)
    expect((await store.get('alice'))?.rotatedAt).toBe('2031-06-06T00:00:00.000Z')
  })

  it('accepts an operator key and refuses the current key again', async () => {
    const { store } = await setup()
    const added = await store.add('alice', 'read')
    expect(await codeOf(() => store.rotate('alice', { key: added.key }))).toBe('ERR_CREDENTIALS_INVALID_KEY')
    const key = 'another-operator-key-0123456789-abcdef'
    expect((await store.rotate('alice', { key })).key).toBe(key)
  })

  it('refuses an absent credential with ERR_CREDENTIALS_NOT_FOUND', async () => {
    const { store } = await setup()
    expect(await codeOf(() => store.rotate('nobody'))).toBe('ERR_CREDENTIALS_NOT_FOUND')
  })
})

describe('remove', () => {
  it('deletes the credential directory', async () => {
    const { store, root } = await setup()
    await store.add('alice', 'chat')
    const removed = await store.remove('alice')
    expect(removed.username).toBe('alice')
    expect(await store.get('alice')).toBeUndefined()
    expect(await codeOf(() => stat(join(root, 'alice')))).toBe('ENOENT')
  })

  it('gives a re-added username a new identity', async () => {
    const { store } = await setup()
    const first = await store.add('alice', 'chat')
    await store.remove('alice')
    const second = await store.add('alice', 'chat')
    expect(second.identity).not.toBe(first.identity)
    expect(second.key).not.toBe(first.key)
  })

  it('removes every OAuth mapping of the credential and keeps the others', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    await store.add('bob', 'chat')
    await store.mapOAuth(ISSUER, 'a1', 'alice')
    await store.mapOAuth('https://other.example', 'a2', 'alice')
    await store.mapOAuth(ISSUER, 'b1', 'bob')
    await store.remove('alice')
    expect(await store.listOAuthMappings()).toEqual([{ issuer: ISSUER, subject: 'b1', username: 'bob' }])
    await store.add('alice', 'chat')
    expect(await store.listOAuthMappings()).toHaveLength(1)
  })

  it('refuses an absent credential with ERR_CREDENTIALS_NOT_FOUND', async () => {
    const { store } = await setup()
    expect(await codeOf(() => store.remove('nobody'))).toBe('ERR_CREDENTIALS_NOT_FOUND')
  })
})

describe('OAuth mappings', () => {
  it('maps an (issuer, subject) pair to a credential', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    expect(await store.mapOAuth(ISSUER, 'sub-1', 'alice')).toEqual({
      issuer: ISSUER,
      subject: 'sub-1',
      username: 'alice',
    })
    expect(await store.listOAuthMappings()).toEqual([{ issuer: ISSUER, subject: 'sub-1', username: 'alice' }])
  })

  it('refuses to map to an unknown username with ERR_CREDENTIALS_NOT_FOUND', async () => {
    const { store } = await setup()
    expect(await codeOf(() => store.mapOAuth(ISSUER, 'sub-1', 'ghost'))).toBe('ERR_CREDENTIALS_NOT_FOUND')
    expect(await store.listOAuthMappings()).toEqual([])
  })

  it('treats mapping the same pair to the same credential again as a no-op', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    expect(await store.listOAuthMappings()).toHaveLength(1)
  })

  it('refuses to move a mapped pair to another credential with ERR_CREDENTIALS_EXISTS', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    await store.add('bob', 'full')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    expect(await codeOf(() => store.mapOAuth(ISSUER, 'sub-1', 'bob'))).toBe('ERR_CREDENTIALS_EXISTS')
  })

  it('keeps issuer and subject exact: another subject or a trailing slash is another pair', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    await store.mapOAuth(`${ISSUER}/`, 'sub-1', 'alice')
    await store.mapOAuth(ISSUER, 'SUB-1', 'alice')
    expect(await store.listOAuthMappings()).toHaveLength(3)
  })

  it('unmaps a pair and refuses an unknown pair with ERR_CREDENTIALS_NOT_FOUND', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    await store.mapOAuth(ISSUER, 'sub-1', 'alice')
    await store.unmapOAuth(ISSUER, 'sub-1')
    expect(await store.listOAuthMappings()).toEqual([])
    expect(await codeOf(() => store.unmapOAuth(ISSUER, 'sub-1'))).toBe('ERR_CREDENTIALS_NOT_FOUND')
  })

  it('refuses a non-HTTPS issuer with ERR_CREDENTIALS_INVALID_MAPPING', async () => {
    const { store } = await setup()
    await store.add('alice', 'chat')
    expect(await codeOf(() => store.mapOAuth('http://login.example.com', 's', 'alice'))).toBe(
      'ERR_CREDENTIALS_INVALID_MAPPING',
    )
  })
})

describe('generation file', () => {
  it('changes on every mutation and not on a refused one', async () => {
    const { store, root } = await setup()
    const generation = () => readFile(join(root, '.generation'), 'utf8')
    await store.add('alice', 'chat')
    const seen = new Set([await generation()])
    await store.setPolicy('alice', 'read')
    seen.add(await generation())
    await store.rotate('alice')
    seen.add(await generation())
    await store.mapOAuth(ISSUER, 's', 'alice')
    seen.add(await generation())
    await store.unmapOAuth(ISSUER, 's')
    seen.add(await generation())
    await store.remove('alice')
    seen.add(await generation())
    expect(seen.size).toBe(6)
    await codeOf(() => store.setPolicy('alice', 'read'))
    expect(seen.has(await generation())).toBe(true)
  })
})
