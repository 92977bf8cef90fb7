import { chmod, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, tempStateDir } from '../test/helpers.ts'
import { ensureHandleSecret, readHandleSecret } from './handle-secret.ts'

async function stateDir(): Promise<string> {
  const dir = await tempStateDir()
  await mkdir(dir, { recursive: true })
  return dir
}

describe('ensureHandleSecret', () => {
  it('creates 32 random bytes with mode 0600 and never overwrites them', async () => {
    const dir = await stateDir()
    expect(await ensureHandleSecret(dir)).toBe(true)
    const first = await readFile(join(dir, 'handle-secret'))
    expect(first).toHaveLength(32)
    expect((await stat(join(dir, 'handle-secret'))).mode & 0o777).toBe(0o600)
    expect(await ensureHandleSecret(dir)).toBe(false)
    expect(await readFile(join(dir, 'handle-secret'))).toEqual(first)
  })

  it('throws RangeError, creating nothing, when the random source returns the wrong size', async () => {
    const dir = await stateDir()
    await expect(ensureHandleSecret(dir, () => new Uint8Array(16))).rejects.toThrow(RangeError)
    await expect(ensureHandleSecret(dir, () => 'x'.repeat(32) as never)).rejects.toThrow(RangeError)
    expect(await codeOf(() => readHandleSecret(dir))).toBe('ERR_CREDENTIALS_SECRET_MISSING')
  })

  it('creates the state directory with mode 0700 when it is missing', async () => {
    const dir = join(await stateDir(), 'nested', 'state')
    await ensureHandleSecret(dir)
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
  })
})

describe('readHandleSecret', () => {
  it('returns the bytes of a private secret file', async () => {
    const dir = await stateDir()
    await ensureHandleSecret(dir)
    const secret = await readHandleSecret(dir)
    expect(secret).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(secret)).toEqual(await readFile(join(dir, 'handle-secret')))
  })

  it('refuses a missing secret with ERR_CREDENTIALS_SECRET_MISSING', async () => {
    const dir = await stateDir()
    expect(await codeOf(() => readHandleSecret(dir))).toBe('ERR_CREDENTIALS_SECRET_MISSING')
  })

  it('refuses a secret shorter than 32 bytes with ERR_CREDENTIALS_SECRET_INVALID', async () => {
    const dir = await stateDir()
    await writeFile(join(dir, 'handle-secret'), Buffer.alloc(31, 1), { mode: 0o600 })
    expect(await codeOf(() => readHandleSecret(dir))).toBe('ERR_CREDENTIALS_SECRET_INVALID')
  })

  it.each([0o640, 0o604, 0o660, 0o644, 0o602])(
    'refuses a secret with mode %o (group or world access) with ERR_CREDENTIALS_SECRET_INSECURE',
    async (mode) => {
      const dir = await stateDir()
      await ensureHandleSecret(dir)
      await chmod(join(dir, 'handle-secret'), mode)
      expect(await codeOf(() => readHandleSecret(dir))).toBe('ERR_CREDENTIALS_SECRET_INSECURE')
    },
  )

  it('accepts mode 0400', async () => {
    const dir = await stateDir()
    await ensureHandleSecret(dir)
    await chmod(join(dir, 'handle-secret'), 0o400)
    expect(await readHandleSecret(dir)).toHaveLength(32)
  })

  it('refuses a symlink and a directory with ERR_CREDENTIALS_SECRET_INVALID', async () => {
    const linked = await stateDir()
    await writeFile(join(linked, 'real'), Buffer.alloc(32, 7), { mode: 0o600 })
    await symlink(join(linked, 'real'), join(linked, 'handle-secret'))
    expect(await codeOf(() => readHandleSecret(linked))).toBe('ERR_CREDENTIALS_SECRET_INVALID')
    const dir = await stateDir()
    await mkdir(join(dir, 'handle-secret'), { mode: 0o700 })
    expect(await codeOf(() => readHandleSecret(dir))).toBe('ERR_CREDENTIALS_SECRET_INVALID')
  })
})
