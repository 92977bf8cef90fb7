import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { schedulerErrorOf, useTempDirs } from '../test/helpers.ts'
import { restoreCandidates, writeExclusive } from './source-files.ts'

/** Lets one test make link() fail (a file system without hard links). */
const linkFailure = vi.hoisted(() => ({ error: undefined as unknown }))
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...original,
    link: async (...args: Parameters<typeof original.link>) => {
      if (linkFailure.error !== undefined) throw linkFailure.error
      return original.link(...args)
    },
  }
})
afterEach(() => {
  linkFailure.error = undefined
})

const tempDir = useTempDirs('sp-src-')

const TEXT = 'version: 1\nprompt: Summarise the notes.\n'

describe('writeExclusive', () => {
  it('creates the file (0600) and leaves no temporary file', async () => {
    const dir = tempDir()
    await writeExclusive(join(dir, 'daily.yml'), TEXT, 'daily')
    expect(readFileSync(join(dir, 'daily.yml'), 'utf8')).toBe(TEXT)
    expect(statSync(join(dir, 'daily.yml')).mode & 0o777).toBe(0o600)
    expect(readdirSync(dir)).toEqual(['daily.yml'])
  })

  it('an existing target is ERR_SCHEDULER_EXISTS, stays as it was, and no temporary file is left', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'daily.yml'), 'mine\n')
    const error = await schedulerErrorOf(writeExclusive(join(dir, 'daily.yml'), TEXT, 'daily'))
    expect(error.code).toBe('ERR_SCHEDULER_EXISTS')
    expect(readFileSync(join(dir, 'daily.yml'), 'utf8')).toBe('mine\n')
    expect(readdirSync(dir)).toEqual(['daily.yml'])
  })

  it('a symlink (also dangling) at the target is ERR_SCHEDULER_EXISTS; its target is not created', async () => {
    const dir = tempDir()
    const missing = join(dir, 'elsewhere.txt')
    symlinkSync(missing, join(dir, 'link.yml'))
    expect((await schedulerErrorOf(writeExclusive(join(dir, 'link.yml'), TEXT, 'link'))).code).toBe(
      'ERR_SCHEDULER_EXISTS',
    )
    expect(existsSync(missing)).toBe(false)
    expect(readdirSync(dir)).toEqual(['link.yml'])
  })

  it('a missing directory is ERR_SCHEDULER_IO naming the source', async () => {
    const dir = join(tempDir(), 'absent')
    const error = await schedulerErrorOf(writeExclusive(join(dir, 'daily.yml'), TEXT, 'daily'))
    expect(error.code).toBe('ERR_SCHEDULER_IO')
    expect(error.message).toBe('cannot write knowledge/tasks/daily.yml (ENOENT)')
    expect(existsSync(dir)).toBe(false)
  })

  it('a failed publish (link refused) is ERR_SCHEDULER_IO and removes the temporary file', async () => {
    const dir = tempDir()
    linkFailure.error = Object.assign(new Error('operation not permitted'), { code: 'EPERM' })
    const error = await schedulerErrorOf(writeExclusive(join(dir, 'daily.yml'), TEXT, 'daily'))
    expect(error.code).toBe('ERR_SCHEDULER_IO')
    expect(error.message).toBe('cannot write knowledge/tasks/daily.yml (EPERM)')
    expect(readdirSync(dir)).toEqual([])
  })

  it('concurrent writers of one id: exactly one wins, the file is whole, no temporary file is left', async () => {
    const dir = tempDir()
    const texts = Array.from({ length: 8 }, (_, i) => `version: 1\nprompt: "${String(i).repeat(50_000)}"\n`)
    const results = await Promise.allSettled(
      texts.map((text) => writeExclusive(join(dir, 'race.yml'), text, 'race')),
    )
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'ERR_SCHEDULER_EXISTS' })
    expect(texts).toContain(readFileSync(join(dir, 'race.yml'), 'utf8'))
    expect(readdirSync(dir)).toEqual(['race.yml'])
  })

  it('a concurrent reader sees no file or the whole file, never a part', async () => {
    const text = `version: 1\nprompt: "${'x'.repeat(900_000)}"\n`
    const seen = new Set<number>()
    // A few rounds: a direct write into the final name is caught in most of them.
    for (let round = 0; round < 5; round++) {
      const dir = tempDir()
      const path = join(dir, 'big.yml')
      let writing = true
      const reader = (async () => {
        while (writing) {
          const got = await readFile(path, 'utf8').catch(() => undefined)
          if (got !== undefined) seen.add(got.length)
        }
      })()
      await writeExclusive(path, text, 'big')
      writing = false
      await reader
      expect(readdirSync(dir)).toEqual(['big.yml'])
    }
    for (const length of seen) expect(length).toBe(text.length)
  })
})

describe('restoreCandidates', () => {
  it('lists the .yml files of a directory newest first (by name), without hidden ones', async () => {
    const dir = tempDir()
    for (const name of [
      'a-20260101T000000000Z.yml',
      'a-20260301T000000000Z.yml',
      'b.yml',
      '.hidden.yml',
      'notes.txt',
    ])
      writeFileSync(join(dir, name), TEXT)
    mkdirSync(join(dir, 'sub'))
    expect((await restoreCandidates(dir)).map((path) => path.slice(dir.length + 1))).toEqual([
      'b.yml',
      'a-20260301T000000000Z.yml',
      'a-20260101T000000000Z.yml',
    ])
  })
})
