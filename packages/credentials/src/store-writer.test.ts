import { mkdir, readFile } from 'node:fs/promises'
import { describe, expect, it, vi } from 'vitest'
import { tempStateDir } from '../test/helpers.ts'
import { createCredentialStore } from './credential-store.ts'
import { CredentialError } from './errors.ts'
import { storePaths } from './store-paths.ts'
import { mutate } from './store-writer.ts'

// Lets a test make the next N writes of the generation file fail (a transient I/O error).
const failures = vi.hoisted(() => ({ generationWrites: 0 }))

vi.mock('./atomic-write.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('./atomic-write.ts')>()
  return {
    ...original,
    writeFileAtomic: async (...args: Parameters<typeof original.writeFileAtomic>) => {
      if (args[0].endsWith('/.generation') && failures.generationWrites > 0) {
        failures.generationWrites--
        throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })
      }
      return original.writeFileAtomic(...args)
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

describe('publishing a change (generation bump)', () => {
  it('retries a failed bump once, so a transient error neither fails the change nor hides it', async () => {
    const stateDir = await tempStateDir()
    const store = createCredentialStore({ stateDir })
    failures.generationWrites = 1
    await store.add('alice', 'chat')
    expect(failures.generationWrites).toBe(0)
    const generation = JSON.parse(await readFile(storePaths(stateDir).generation, 'utf8'))
    expect(generation).toMatchObject({ generation: 1 })
  })

  it('says the change was applied but not published when the bump keeps failing', async () => {
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
  })

  it("never replaces the mutation's own error with a failed bump", async () => {
    const stateDir = await tempStateDir()
    const paths = storePaths(stateDir)
    await mkdir(paths.generation, { recursive: true })
    const own = new CredentialError('ERR_CREDENTIALS_NOT_FOUND', 'the mutation failed half-way')
    const error = await caught(
      mutate(paths, writer, async (mutation) => {
        mutation.changed()
        throw own
      }),
    )
    expect(error).toBe(own)
  })

  it('still publishes a change whose mutation failed after changing something', async () => {
    const stateDir = await tempStateDir()
    const paths = storePaths(stateDir)
    const own = new CredentialError('ERR_CREDENTIALS_NOT_FOUND', 'the mutation failed half-way')
    await expect(
      mutate(paths, writer, async (mutation) => {
        mutation.changed()
        throw own
      }),
    ).rejects.toBe(own)
    expect(JSON.parse(await readFile(paths.generation, 'utf8'))).toMatchObject({ generation: 1 })
  })
})
