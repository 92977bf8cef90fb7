import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, tempStateDir } from '../test/helpers.ts'
import { createCredentialStore } from './credential-store.ts'
import { CredentialError } from './errors.ts'
import { readKey, readSnapshot } from './read-store.ts'
import { storePaths } from './store-paths.ts'

async function setup() {
  const stateDir = await tempStateDir()
  const store = createCredentialStore({ stateDir })
  const alice = await store.add('alice', 'chat')
  return { stateDir, store, alice, paths: storePaths(stateDir), root: join(stateDir, 'credentials') }
}

async function caught(fn: () => Promise<unknown>): Promise<CredentialError> {
  try {
    await fn()
  } catch (error) {
    expect(CredentialError.isInstance(error)).toBe(true)
    return error as CredentialError
  }
  throw new Error('expected a rejection')
}

describe('reading a damaged store', () => {
  it.each([
    ['not JSON', '{"version":1,'],
    ['an unknown policy', '{"version":1,"identity":"id_AAAAAAAAAAAAAAAAAAAAAA","policy":"root"}'],
    ['an extra field', null],
    ['an empty file', ''],
  ])('reports meta.json holding %s as ERR_CREDENTIALS_CORRUPT naming the file', async (_name, content) => {
    const { store, root } = await setup()
    const file = join(root, 'alice/meta.json')
    const meta = JSON.parse(await readFile(file, 'utf8'))
    await writeFile(file, content ?? JSON.stringify({ ...meta, admin: true }))
    const error = await caught(() => store.list())
    expect(error.code).toBe('ERR_CREDENTIALS_CORRUPT')
    expect(error.message).toContain('credentials/alice/meta.json')
    expect(error.message).not.toContain(root)
    expect(await codeOf(() => store.setPolicy('alice', 'full'))).toBe('ERR_CREDENTIALS_CORRUPT')
  })

  it('reports a credential directory without meta.json as ERR_CREDENTIALS_CORRUPT', async () => {
    const { store, root } = await setup()
    await mkdir(join(root, 'bob'))
    await writeFile(join(root, 'bob/key'), 'b'.repeat(40))
    expect(await codeOf(() => store.list())).toBe('ERR_CREDENTIALS_CORRUPT')
  })

  it('reports a key file that breaks the key rules without revealing its content', async () => {
    const { paths, root } = await setup()
    await writeFile(join(root, 'alice/key'), 'hunter2 is my password')
    const error = await caught(() => readKey(paths, 'alice'))
    expect(error.code).toBe('ERR_CREDENTIALS_CORRUPT')
    expect(error.message).toContain('credentials/alice/key')
    expect(error.message).not.toContain('hunter2')
    expect(error.cause).toBeUndefined()
  })

  it('tolerates one trailing newline in a hand-written key file', async () => {
    const { paths, root } = await setup()
    await writeFile(join(root, 'alice/key'), `${'h'.repeat(40)}\n`)
    expect(await readKey(paths, 'alice')).toBe('h'.repeat(40))
  })

  it('reports a damaged oauth-map.json as ERR_CREDENTIALS_CORRUPT', async () => {
    const { store, root } = await setup()
    await writeFile(
      join(root, 'oauth-map.json'),
      '{"version":1,"mappings":[{"issuer":"http://x","subject":"s"}]}',
    )
    expect(await codeOf(() => store.listOAuthMappings())).toBe('ERR_CREDENTIALS_CORRUPT')
    expect(await codeOf(() => store.mapOAuth('https://x.example', 's', 'alice'))).toBe(
      'ERR_CREDENTIALS_CORRUPT',
    )
  })

  it('ignores entries that are not valid usernames', async () => {
    const { paths, root } = await setup()
    await mkdir(join(root, 'Bob'))
    await mkdir(join(root, '.tmp-left-over'))
    await writeFile(join(root, 'notes.txt'), 'x')
    const snapshot = await readSnapshot(paths)
    expect(snapshot.credentials.map((c) => c.username)).toEqual(['alice'])
  })

  it('reads the rest of the store around a damaged credential directory and oauth-map.json', async () => {
    const { store, paths, root } = await setup()
    await store.add('bob', 'read')
    await store.add('carol', 'full')
    await store.mapOAuth('https://x.example', 's', 'carol')
    await writeFile(join(root, 'alice/meta.json'), 'nope')
    await writeFile(join(root, 'bob/key'), 'short')
    expect((await readSnapshot(paths)).mappings).toHaveLength(1)
    await writeFile(join(root, 'oauth-map.json'), '[')
    const snapshot = await readSnapshot(paths)
    expect(snapshot.credentials.map((c) => c.username)).toEqual(['carol'])
    expect(snapshot.mappings).toEqual([])
    expect(snapshot.problems.map((problem) => problem.code)).toEqual([
      'ERR_CREDENTIALS_CORRUPT',
      'ERR_CREDENTIALS_CORRUPT',
      'ERR_CREDENTIALS_CORRUPT',
    ])
    expect(snapshot.problems.map((problem) => problem.message.split(' ')[0])).toEqual([
      'credentials/alice/meta.json',
      'credentials/bob/key',
      'credentials/oauth-map.json',
    ])
  })

  it('treats a credential that disappears while being read as absent, not corrupt', async () => {
    const { paths, root } = await setup()
    await rm(join(root, 'alice'), { recursive: true })
    expect(await readKey(paths, 'alice')).toBeUndefined()
  })

  it('heals a damaged generation file on the next mutation', async () => {
    const { store, root } = await setup()
    await writeFile(join(root, '.generation'), 'garbage')
    await store.add('bob', 'chat')
    expect(JSON.parse(await readFile(join(root, '.generation'), 'utf8'))).toMatchObject({ generation: 1 })
  })
})
