import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  createWorkspaceGuard,
  DEFAULT_MAX_BYTES,
  DEFAULT_SEARCH_LIMIT,
  GuardError,
  MAX_PATH_LENGTH,
  MAX_QUERY_LENGTH,
  MAX_SEARCH_LIMIT,
} from '../src/index.ts'
import { RIPGREP } from './helpers/search-fixture.ts'

const base = mkdtempSync(join(tmpdir(), 'workspace-guard-options-'))
const file = join(base, 'file.txt')
writeFileSync(file, 'x')
const fakeRipgrep = join(base, 'fake-rg')
writeFileSync(fakeRipgrep, '#!/bin/sh\necho "not ripgrep"\n')
chmodSync(fakeRipgrep, 0o755)
symlinkSync(base, join(base, 'self-link'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe('createWorkspaceGuard: options are validated at creation', () => {
  it.each([
    ['a relative root', { root: 'work' }, TypeError],
    ['an empty root', { root: '' }, TypeError],
    ['a missing root', { root: join(base, 'missing') }, TypeError],
    ['a root that is a file', { root: file }, TypeError],
    ['a root with NUL', { root: `${base}\0x` }, TypeError],
    ['a root that is not a string', { root: 42 }, TypeError],
    ['maxBytes 0', { root: base, maxBytes: 0 }, RangeError],
    ['a fractional maxBytes', { root: base, maxBytes: 1.5 }, RangeError],
    ['maxBytes over 64 MiB', { root: base, maxBytes: 64 * 1024 * 1024 + 1 }, RangeError],
    ['timeBudgetMs 0', { root: base, timeBudgetMs: 0 }, RangeError],
    ['fileBudget 0', { root: base, fileBudget: 0 }, RangeError],
    ['a relative ripgrepPath', { root: base, ripgrepPath: 'rg' }, TypeError],
    ['a missing ripgrepPath', { root: base, ripgrepPath: join(base, 'no-rg') }, TypeError],
    ['a ripgrepPath that is not ripgrep', { root: base, ripgrepPath: fakeRipgrep }, TypeError],
    ['exclude that is not an array', { root: base, exclude: 'node_modules' }, TypeError],
    ['an exclude entry with a slash', { root: base, exclude: ['a/b'] }, TypeError],
    ['an exclude entry with a glob', { root: base, exclude: ['*.log'] }, TypeError],
    ['an exclude entry `..`', { root: base, exclude: ['..'] }, TypeError],
    ['now that is not a function', { root: base, now: 5 }, TypeError],
  ])('throws for %s', (_label, options, errorClass) => {
    expect(() => createWorkspaceGuard(options as never)).toThrow(errorClass)
  })

  it('never repeats the rejected root in the message', () => {
    const secretish = join(base, 'missing', 'very-private-name')
    expect(() => createWorkspaceGuard({ root: secretish })).toThrow(/^root must be/)
    try {
      createWorkspaceGuard({ root: secretish })
    } catch (error) {
      expect((error as Error).message).not.toContain('very-private-name')
    }
  })

  it('accepts a root reached through a symlink and works on its canonical form', async () => {
    writeFileSync(join(base, 'hello.txt'), 'hi\n')
    const guard = createWorkspaceGuard({ root: join(base, 'self-link') })
    expect((await guard.read('hello.txt')).text).toBe('hi\n')
  })

  it('accepts ripgrepPath false (built-in engine) and an explicit ripgrep', () => {
    expect(() => createWorkspaceGuard({ root: base, ripgrepPath: false })).not.toThrow()
    expect(() => createWorkspaceGuard({ root: base, ripgrepPath: RIPGREP })).not.toThrow()
  })

  it('uses the built-in engine when no rg is on PATH', async () => {
    const saved = process.env.PATH
    process.env.PATH = join(base, 'empty-path')
    try {
      const guard = createWorkspaceGuard({ root: base })
      expect((await guard.search({ mode: 'files', query: 'hello' })).matches).toEqual([{ path: 'hello.txt' }])
    } finally {
      process.env.PATH = saved
    }
  })

  it('returns a frozen object with check, inspect, read and search', () => {
    const guard = createWorkspaceGuard({ root: base })
    expect(Object.isFrozen(guard)).toBe(true)
    expect(Object.keys(guard).sort()).toEqual(['check', 'inspect', 'read', 'search'])
  })
})

describe('exported limits', () => {
  it('are the documented numbers', () => {
    expect({
      MAX_PATH_LENGTH,
      MAX_QUERY_LENGTH,
      DEFAULT_SEARCH_LIMIT,
      MAX_SEARCH_LIMIT,
      DEFAULT_MAX_BYTES,
    }).toEqual({
      MAX_PATH_LENGTH: 1024,
      MAX_QUERY_LENGTH: 500,
      DEFAULT_SEARCH_LIMIT: 20,
      MAX_SEARCH_LIMIT: 100,
      DEFAULT_MAX_BYTES: 256 * 1024,
    })
  })

  it('are the bounds the guard enforces, each one inclusive', async () => {
    const guard = createWorkspaceGuard({ root: base, ripgrepPath: false })
    const path = (length: number): string => `${'a/'.repeat(length / 2 - 1)}ab`
    expect(guard.check(path(MAX_PATH_LENGTH)).ok).toBe(true)
    expect(guard.check(path(MAX_PATH_LENGTH + 2)).ok).toBe(false)
    const search = (query: string, limit?: number) =>
      guard.search({ mode: 'files', query, ...(limit !== undefined && { limit }) })
    await expect(search('q'.repeat(MAX_QUERY_LENGTH))).resolves.toMatchObject({ truncated: false })
    await expect(search('q'.repeat(MAX_QUERY_LENGTH + 1))).rejects.toMatchObject({
      code: 'ERR_GUARD_INVALID',
    })
    await expect(search('x', MAX_SEARCH_LIMIT)).resolves.toBeDefined()
    await expect(search('x', MAX_SEARCH_LIMIT + 1)).rejects.toMatchObject({ code: 'ERR_GUARD_INVALID' })
  })

  it('searches DEFAULT_SEARCH_LIMIT matches when no limit is given, and reads up to DEFAULT_MAX_BYTES', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'workspace-guard-limits-'))
    try {
      for (let i = 0; i < DEFAULT_SEARCH_LIMIT + 5; i++) writeFileSync(join(dir, `hit${i}.txt`), 'x')
      writeFileSync(join(dir, 'full.txt'), 'a'.repeat(DEFAULT_MAX_BYTES))
      writeFileSync(join(dir, 'over.txt'), 'a'.repeat(DEFAULT_MAX_BYTES + 1))
      const guard = createWorkspaceGuard({ root: dir, ripgrepPath: false })
      const result = await guard.search({ mode: 'files', query: 'hit' })
      expect(result).toMatchObject({ truncated: true })
      expect(result.matches).toHaveLength(DEFAULT_SEARCH_LIMIT)
      expect((await guard.read('full.txt')).text).toHaveLength(DEFAULT_MAX_BYTES)
      await expect(guard.read('over.txt')).rejects.toMatchObject({ code: 'ERR_GUARD_TOO_LARGE' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('GuardError', () => {
  it('has a name, a code, the fixed message and an isInstance check', () => {
    const error = new GuardError('ERR_GUARD_NOT_FOUND')
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('GuardError')
    expect(error.message).toBe('no such file in the workspace')
    expect(GuardError.isInstance(error)).toBe(true)
    // Another copy of the package: another class, the same registered symbol.
    const foreign = Object.assign(new Error('x'), {
      name: 'GuardError',
      code: 'ERR_GUARD_DENIED',
      [Symbol.for('sallyport.workspace-guard.GuardError')]: true,
    })
    expect(GuardError.isInstance(foreign)).toBe(true)
    expect(GuardError.isInstance(new Error('x'))).toBe(false)
    const nameOnly = Object.assign(new Error('x'), { name: 'GuardError', code: 'ERR_GUARD_DENIED' })
    expect(GuardError.isInstance(nameOnly)).toBe(false)
    expect(GuardError.isInstance({ name: 'GuardError', code: 'ERR_GUARD_DENIED' })).toBe(false)
  })
})
