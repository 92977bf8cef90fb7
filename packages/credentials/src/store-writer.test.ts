import { mkdir, readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { tempStateDir } from '../test/helpers.ts'
import { createCredentialStore } from './credential-store.ts'
import { CredentialError } from './errors.ts'
import { storePaths } from './store-paths.ts'
import { mutate } from './store-writer.ts'

// Faults a test injects: the next N temporary writes of the generation file fail (a transient I/O
// error); the temporary write of a file whose path ends with `failWrite` fails with `failCode`
// (a disk that fills up half-way through a mutation); the rename onto a path ending with
// `failRename` fails (a file system that turns read-only between two renames).
const faults = vi.hoisted(() => ({
  generationWrites: 0,
  failWrite: undefined as string | undefined,
  failCode: 'ENOSPC',
  failRename: undefined as string | undefined,
}))

vi.mock('./atomic-write.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('./atomic-write.ts')>()
  return {
    ...original,
    writeTempFile: async (...args: Parameters<typeof original.writeTempFile>) => {
      if (args[0].endsWith('/.generation') && faults.generationWrites > 0) {
        faults.generationWrites--
        throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })
      }
      if (faults.failWrite !== undefined && args[0].endsWith(faults.failWrite)) {
        const code = faults.failCode
        throw Object.assign(new Error(`${code}: write failed`), { code, path: `${args[0]}` })
      }
      return original.writeTempFile(...args)
    },
    writeTempDir: async (...args: Parameters<typeof original.writeTempDir>) => {
      if (faults.failWrite !== undefined && args[0].endsWith(faults.failWrite)) {
        const code = faults.failCode
        throw Object.assign(new Error(`${code}: write failed`), { code, path: `${args[0]}/key` })
      }
      return original.writeTempDir(...args)
    },
  }
})

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...original,
    rename: async (from: string, to: string) => {
      if (faults.failRename !== undefined && to.endsWith(faults.failRename)) {
        throw Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS', path: from })
      }
      return original.rename(from, to)
    },
  }
})

const writer = { lockTimeoutMs: 2_000, staleLockMs: 10_000 }

async function caught(promise: Promise<unknown>): Promise<CredentialError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(CredentialError.isInstance(error)).toBe(true)
  return error as CredentialError
}

/** Every file under `dir` with its content: what a byte-for-byte comparison compares. */
async function contents(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    out[path.slice(dir.length + 1)] = await readFile(path, 'latin1')
  }
  return out
}

/** Entries left by a writer: temporaries (`.tmp-…`) and the lock. */
async function leftovers(dir: string): Promise<string[]> {
  const names = await readdir(dir, { recursive: true })
  return names.filter((name) => name.split('/').some((part) => part.startsWith('.tmp-') || part === '.lock'))
}

function reset(): void {
  faults.generationWrites = 0
  faults.failWrite = undefined
  faults.failCode = 'ENOSPC'
  faults.failRename = undefined
}

describe('publishing a change (generation bump)', () => {
  it('retries a failed bump once, so a transient error neither fails the change nor hides it', async () => {
    reset()
    const stateDir = await tempStateDir()
    const store = createCredentialStore({ stateDir })
    faults.generationWrites = 1
    await store.add('alice', 'chat')
    expect(faults.generationWrites).toBe(0)
    const generation = JSON.parse(await readFile(storePaths(stateDir).generation, 'utf8'))
    expect(generation).toMatchObject({ generation: 1 })
  })

  it('says the change was applied but not published when the bump keeps failing', async () => {
    reset()
    const stateDir = await tempStateDir()
    const store = createCredentialStore({ stateDir })
    // A directory where the generation file belongs: every bump fails.
    await mkdir(storePaths(stateDir).generation, { recursive: true })
    const error = await caught(store.add('alice', 'chat'))
    expect(error.code).toBe('ERR_CREDENTIALS_IO')
    expect(error.message).toMatch(/applied but not published/)
    expect(error.message).toContain('credentials/.generation')
    expect(error.message).not.toContain(stateDir)
    expect(await store.get('alice')).toMatchObject({ username: 'alice', policy: 'chat' })
    expect(await leftovers(storePaths(stateDir).root)).toEqual([])
  })

  it("never replaces the mutation's own error with a failed bump", async () => {
    reset()
    const stateDir = await tempStateDir()
    const paths = storePaths(stateDir)
    await mkdir(paths.generation, { recursive: true })
    const own = new CredentialError('ERR_CREDENTIALS_NOT_FOUND', 'the mutation failed half-way')
    const error = await caught(
      mutate(paths, writer, async (mutation) => {
        await mutation.writeFile(join(paths.root, 'oauth-map.json'), '{}')
        throw own
      }),
    )
    expect(error).toBe(own)
  })

  it('a mutation that throws after staging changes nothing, publishes nothing and leaves no temporary file', async () => {
    reset()
    const stateDir = await tempStateDir()
    const paths = storePaths(stateDir)
    const store = createCredentialStore({ stateDir })
    await store.add('alice', 'chat')
    const before = await contents(paths.root)
    const own = new CredentialError('ERR_CREDENTIALS_NOT_FOUND', 'the mutation failed half-way')
    await expect(
      mutate(paths, writer, async (mutation) => {
        await mutation.writeFile(paths.metaFile('alice'), '{}')
        await mutation.createDir(paths.userDir('bob'), { key: 'k' })
        mutation.removeDir(paths.userDir('alice'))
        throw own
      }),
    ).rejects.toBe(own)
    expect(await contents(paths.root)).toEqual(before)
    expect(await leftovers(paths.root)).toEqual([])
  })
})

describe('a disk that fills up or turns read-only during a mutation', () => {
  it('rotate: the new key is written but the metadata is not (disk full) — nothing changes, the old key stays', async () => {
    reset()
    const stateDir = await tempStateDir()
    const paths = storePaths(stateDir)
    const store = createCredentialStore({ stateDir })
    await store.add('alice', 'chat')
    const before = await contents(paths.root)
    faults.failWrite = '/alice/meta.json'
    const error = await caught(store.rotate('alice'))
    expect(error.code).toBe('ERR_CREDENTIALS_IO')
    expect(error.message).toBe(
      'credential store write failed: the disk is full (ENOSPC, credentials/alice/meta.json); nothing was changed',
    )
    // Byte for byte: the key, the metadata and the generation are those of before.
    expect(await contents(paths.root)).toEqual(before)
    expect(await leftovers(paths.root)).toEqual([])
  })

  it.each([
    ['add', (s: ReturnType<typeof createCredentialStore>) => s.add('bob', 'read'), '/bob'],
    [
      'set-policy',
      (s: ReturnType<typeof createCredentialStore>) => s.setPolicy('alice', 'full'),
      '/meta.json',
    ],
    [
      'remove (the generation cannot be staged)',
      (s: ReturnType<typeof createCredentialStore>) => s.remove('alice'),
      '/.generation',
    ],
  ])('%s on a full disk: nothing changes, no temporary file is left', async (_name, run, failWrite) => {
    reset()
    const stateDir = await tempStateDir()
    const paths = storePaths(stateDir)
    const store = createCredentialStore({ stateDir })
    await store.add('alice', 'chat')
    const before = await contents(paths.root)
    faults.failWrite = failWrite
    faults.failCode = 'EDQUOT'
    const error = await caught(run(store))
    expect(error.message).toMatch(
      /^credential store write failed: the disk quota is used up \(EDQUOT.*; nothing was changed$/,
    )
    expect(error.message).not.toContain('.tmp-')
    expect(await contents(paths.root)).toEqual(before)
    expect(await leftovers(paths.root)).toEqual([])
  })

  it('rotate: the file system turns read-only between the two renames — reported as partly applied and published', async () => {
    reset()
    const stateDir = await tempStateDir()
    const paths = storePaths(stateDir)
    const store = createCredentialStore({ stateDir })
    await store.add('alice', 'chat')
    faults.failRename = '/alice/meta.json'
    const error = await caught(store.rotate('alice'))
    expect(error.message).toMatch(
      /^credential store write failed half-way: the file system is read-only \(EROFS, credentials\/alice\/meta\.json\); part of the change was applied \(run the command again/,
    )
    // Published, so running gateways see the key that is now in force.
    expect(JSON.parse(await readFile(paths.generation, 'utf8'))).toMatchObject({ generation: 2 })
    expect(await leftovers(paths.root)).toEqual([])
  })
})
