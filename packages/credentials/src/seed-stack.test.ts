import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempStateDir } from '../test/helpers.ts'
import { createCredentialStore } from './credential-store.ts'
import { createKeyResolver } from './key-resolver.ts'
import { seedStack } from './seed-stack.ts'

async function snapshotFiles(stateDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  async function walk(dir: string) {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else out[path] = `${(await stat(path)).mtimeMs}:${(await readFile(path)).toString('base64')}`
    }
  }
  await walk(stateDir)
  return out
}

describe('seedStack', () => {
  it('creates owner (full), discord (chat), slack (chat) and the handle secret', async () => {
    const stateDir = await tempStateDir()
    const result = await seedStack({ stateDir })
    expect(result.handleSecretCreated).toBe(true)
    expect(result.credentials.map(({ username, policy }) => ({ username, policy }))).toEqual([
      { username: 'owner', policy: 'full' },
      { username: 'discord', policy: 'chat' },
      { username: 'slack', policy: 'chat' },
    ])
    for (const name of ['owner', 'discord', 'slack']) {
      expect((await stat(join(stateDir, 'credentials', name, 'key'))).mode & 0o777).toBe(0o600)
    }
    const resolver = createKeyResolver({ stateDir, watch: false })
    for (const issued of result.credentials) {
      expect(await resolver.resolve(issued.key)).toMatchObject({
        ok: true,
        principal: { username: issued.username },
      })
    }
    expect((await stat(join(stateDir, 'handle-secret'))).size).toBeGreaterThanOrEqual(32)
  })

  it('changes nothing on a second run and reports nothing created', async () => {
    const stateDir = await tempStateDir()
    await seedStack({ stateDir })
    const before = await snapshotFiles(stateDir)
    expect(await seedStack({ stateDir })).toEqual({ credentials: [], handleSecretCreated: false })
    expect(await snapshotFiles(stateDir)).toEqual(before)
  })

  it('fills in only what is missing and keeps an operator-changed policy', async () => {
    const stateDir = await tempStateDir()
    const store = createCredentialStore({ stateDir })
    const owner = await store.add('owner', 'read')
    const result = await seedStack({ stateDir })
    expect(result.credentials.map((c) => c.username)).toEqual(['discord', 'slack'])
    expect(await store.get('owner')).toMatchObject({ identity: owner.identity, policy: 'read' })
    expect(await readFile(join(stateDir, 'credentials/owner/key'), 'utf8')).toBe(owner.key)
  })

  it('creates each credential once when seeds run concurrently', async () => {
    const stateDir = await tempStateDir()
    const results = await Promise.all([
      seedStack({ stateDir }),
      seedStack({ stateDir }),
      seedStack({ stateDir }),
    ])
    expect(results.flatMap((r) => r.credentials.map((c) => c.username)).sort()).toEqual([
      'discord',
      'owner',
      'slack',
    ])
    expect(results.filter((r) => r.handleSecretCreated)).toHaveLength(1)
  })
})
