import { lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, tempStateDir } from '../test/helpers.ts'
import {
  createDirAtomic,
  createFileExclusive,
  ensurePrivateDir,
  removeDirAtomic,
  withoutTempNames,
  writeFileAtomic,
  writeTempDir,
  writeTempFile,
} from './atomic-write.ts'

async function dir(): Promise<string> {
  const path = await tempStateDir()
  await mkdir(path, { recursive: true })
  return path
}

const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8)

describe('writeFileAtomic', () => {
  it('replaces the content and forces mode 0600 on a file that was 0644', async () => {
    const base = await dir()
    const file = join(base, 'f')
    await writeFile(file, 'old', { mode: 0o644 })
    await writeFileAtomic(file, 'new')
    expect(await readFile(file, 'utf8')).toBe('new')
    expect(await mode(file)).toBe('600')
    expect(await readdir(base)).toEqual(['f'])
  })

  it('replaces a planted symlink instead of writing through it', async () => {
    const base = await dir()
    await writeFile(join(base, 'victim'), 'untouched')
    await symlink(join(base, 'victim'), join(base, 'f'))
    await writeFileAtomic(join(base, 'f'), 'new')
    expect(await readFile(join(base, 'victim'), 'utf8')).toBe('untouched')
    expect((await lstat(join(base, 'f'))).isSymbolicLink()).toBe(false)
  })

  it('leaves no temporary file when the target directory is missing', async () => {
    const base = await dir()
    expect(await codeOf(() => writeFileAtomic(join(base, 'missing/f'), 'x'))).toBe('ENOENT')
    expect(await readdir(base)).toEqual([])
  })
})

describe('createFileExclusive', () => {
  it('creates a missing file 0600 and never overwrites an existing one', async () => {
    const base = await dir()
    const file = join(base, 'secret')
    expect(await createFileExclusive(file, 'first')).toBe(true)
    expect(await createFileExclusive(file, 'second')).toBe(false)
    expect(await readFile(file, 'utf8')).toBe('first')
    expect(await mode(file)).toBe('600')
    expect(await readdir(base)).toEqual(['secret'])
  })
})

describe('createDirAtomic and removeDirAtomic', () => {
  it('creates a complete 0700 directory of 0600 files in one rename', async () => {
    const base = await dir()
    await createDirAtomic(join(base, 'alice'), { key: 'k', 'meta.json': '{}' })
    expect((await readdir(join(base, 'alice'))).sort()).toEqual(['key', 'meta.json'])
    expect(await mode(join(base, 'alice'))).toBe('700')
    expect(await mode(join(base, 'alice/key'))).toBe('600')
    expect(await readdir(base)).toEqual(['alice'])
  })

  it('fails on an existing non-empty directory and leaves no temporary directory', async () => {
    const base = await dir()
    await createDirAtomic(join(base, 'alice'), { key: 'k' })
    expect(['ENOTEMPTY', 'EEXIST']).toContain(
      await codeOf(() => createDirAtomic(join(base, 'alice'), { key: 'j' })),
    )
    expect(await readFile(join(base, 'alice/key'), 'utf8')).toBe('k')
    expect(await readdir(base)).toEqual(['alice'])
  })

  it('removes a directory without leaving the renamed copy', async () => {
    const base = await dir()
    await createDirAtomic(join(base, 'alice'), { key: 'k' })
    await removeDirAtomic(join(base, 'alice'))
    expect(await readdir(base)).toEqual([])
  })
})

describe('ensurePrivateDir', () => {
  it('tightens an existing directory to 0700', async () => {
    const base = await dir()
    await mkdir(join(base, 'open'), { mode: 0o755 })
    await ensurePrivateDir(join(base, 'open'))
    expect(await mode(join(base, 'open'))).toBe('700')
  })
})

describe('writeTempFile and writeTempDir', () => {
  it('leave nothing behind when the write fails', async () => {
    const base = await dir()
    // A missing parent directory (of the file; of a file inside the temporary directory).
    const big = 'x'.repeat(10)
    expect(await codeOf(() => writeTempFile(join(base, 'missing/f'), big))).toBe('ENOENT')
    expect(await codeOf(() => writeTempDir(join(base, 'alice'), { 'a/b': big }))).toBe('ENOENT')
    expect(await readdir(base)).toEqual([])
  })
})

describe('withoutTempNames', () => {
  it('names the file a temporary entry stands for', () => {
    expect(withoutTempNames('credentials/.tmp-.lock-AbCdEfGhIjKl')).toBe('credentials/.lock')
    expect(withoutTempNames('credentials/.tmp-.lock-aside-AbCdEfGh_-Kl')).toBe('credentials/.lock')
    expect(withoutTempNames('credentials/.tmp-alice-AbCdEfGhIjKl/key')).toBe('credentials/alice/key')
    expect(withoutTempNames('credentials/alice/.tmp-meta.json-AbCdEfGhIjKl')).toBe(
      'credentials/alice/meta.json',
    )
    expect(withoutTempNames('credentials/.tmp-bob-removed-AbCdEfGhIjKl')).toBe('credentials/bob')
    expect(withoutTempNames('credentials/alice/key')).toBe('credentials/alice/key')
  })
})
