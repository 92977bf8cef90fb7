import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorkspaceGuard, type WorkspaceGuard } from '../src/index.ts'
import {
  createSearchFixture,
  ENGINES,
  expectNothingDenied,
  expectReadable,
  NEEDLE,
} from './helpers/search-fixture.ts'
import { expectCode, type WorkspaceFixture } from './helpers/workspace-fixture.ts'

let fx: WorkspaceFixture
beforeAll(() => {
  fx = createSearchFixture()
})
afterAll(() => fx.remove())

describe.each(ENGINES)('search (%s engine)', (_engine, engineOptions) => {
  let guard: WorkspaceGuard
  beforeAll(() => {
    guard = createWorkspaceGuard({ root: fx.root, ...engineOptions })
  })

  describe('text', () => {
    it('finds lines with the literal, case-insensitively, with line, column and preview', async () => {
      const result = await guard.search({ mode: 'text', query: NEEDLE })
      expect(result).toEqual({
        matches: [
          { path: 'README.md', line: 3, column: 10, preview: `Find the ${NEEDLE.toUpperCase()} here.` },
          { path: 'config/.env.example', line: 1, column: 7, preview: `TOKEN=${NEEDLE}` },
          { path: 'lib/Zebra.java', line: 2, column: 17, preview: 'public void zebraNeedle() {}' },
          { path: 'lib/lib.rs', line: 1, column: 12, preview: 'pub struct ZebraNeedle;' },
          { path: 'lib/lib.rs', line: 2, column: 6, preview: 'impl ZebraNeedle {' },
          { path: 'lib/server.go', line: 2, column: 6, preview: 'func ZebraNeedle() {}' },
          { path: 'src/app.ts', line: 1, column: 17, preview: `export function ${NEEDLE}Fn() {` },
          { path: 'src/app.ts', line: 4, column: 4, preview: `// ${NEEDLE} in a comment` },
          { path: 'src/env/index.ts', line: 1, column: 27, preview: `export const envNeedle = '${NEEDLE}'` },
        ],
        truncated: false,
      })
      await expectReadable(guard, result.matches)
    })

    it('matches case exactly when asked', async () => {
      const result = await guard.search({ mode: 'text', query: NEEDLE.toUpperCase(), caseSensitive: true })
      expect(result.matches.map((m) => m.path)).toEqual(['README.md'])
    })

    it('never returns denied files, symlinked files, binary, oversize, private-key or hard-linked files', async () => {
      const result = await guard.search({ mode: 'text', query: NEEDLE, limit: 100 })
      expectNothingDenied(fx, result.matches)
      const paths = result.matches.map((m) => m.path)
      for (const skipped of ['assets/', 'logs/', 'notes/', 'links/', 'node_modules/']) {
        expect(paths.some((p) => p.startsWith(skipped))).toBe(false)
      }
    })

    it('never returns the content of a file outside the root', async () => {
      expect((await guard.search({ mode: 'text', query: fx.canary })).matches).toEqual([])
    })

    it.each(['--help', '-e', '--files', '--pre=sh', '-'])(
      'treats a query starting with "-" (%s) as a literal',
      async (query) => {
        const result = await guard.search({ mode: 'text', query })
        expectNothingDenied(fx, result.matches)
        for (const match of result.matches)
          expect(match.preview?.toLowerCase()).toContain(query.toLowerCase())
      },
    )

    it('finds a flag-like literal', async () => {
      const result = await guard.search({ mode: 'text', query: '--help' })
      expect(result.matches).toEqual([
        { path: 'docs/cli.md', line: 1, column: 10, preview: 'Run with --help to list flags.' },
      ])
    })

    it('treats regular-expression characters literally', async () => {
      const result = await guard.search({ mode: 'text', query: 'a.*b' })
      expect(result.matches).toEqual([
        { path: 'docs/cli.md', line: 3, column: 7, preview: 'Match a.*b literally.' },
      ])
    })

    it('defaults to 20 matches and says the result is truncated', async () => {
      const result = await guard.search({ mode: 'text', query: 'repeat line' })
      expect(result.matches).toHaveLength(20)
      expect(result.truncated).toBe(true)
    })

    it('respects a limit, up to 100', async () => {
      const five = await guard.search({ mode: 'text', query: 'repeat line', limit: 5 })
      expect(five.matches).toHaveLength(5)
      expect(five.truncated).toBe(true)
      const hundred = await guard.search({ mode: 'text', query: 'repeat line', limit: 100 })
      expect(hundred.matches).toHaveLength(100)
      expect(hundred.truncated).toBe(true)
    })

    it('is not truncated when every match fits', async () => {
      const result = await guard.search({ mode: 'text', query: 'repeat line 14', limit: 100 })
      expect(result.matches.map((m) => m.line)).toEqual([
        15,
        ...Array.from({ length: 10 }, (_, i) => 141 + i),
      ])
      expect(result.truncated).toBe(false)
    })

    it('searches excluded directories when exclude is emptied', async () => {
      const all = createWorkspaceGuard({ root: fx.root, ...engineOptions, exclude: [] })
      const result = await all.search({ mode: 'text', query: NEEDLE, limit: 100 })
      expect(result.matches.map((m) => m.path)).toContain('node_modules/pkg/zebraNeedle.js')
    })
  })

  describe('invalid options', () => {
    it.each([
      ['an unknown mode', { mode: 'regex', query: 'x' }],
      ['an empty query', { mode: 'text', query: '' }],
      ['a query over 500 characters', { mode: 'text', query: 'x'.repeat(501) }],
      ['a query that is not a string', { mode: 'text', query: 42 }],
      ['a query with a newline', { mode: 'text', query: 'a\nb' }],
      ['a query with NUL', { mode: 'files', query: 'a\0b' }],
      ['a lone surrogate', { mode: 'text', query: '\ud800' }],
      ['limit 0', { mode: 'text', query: 'x', limit: 0 }],
      ['limit 101', { mode: 'text', query: 'x', limit: 101 }],
      ['a fractional limit', { mode: 'text', query: 'x', limit: 1.5 }],
      ['a string limit', { mode: 'text', query: 'x', limit: '5' }],
      ['a non-boolean caseSensitive', { mode: 'text', query: 'x', caseSensitive: 'yes' }],
      ['no options at all', undefined],
    ])('refuses %s', async (_label, options) => {
      const error = await expectCode(guard.search(options as never), 'ERR_GUARD_INVALID')
      expect(error.message).not.toContain('xxxxx')
    })

    it('accepts a query of exactly 500 characters and limit 100', async () => {
      await expect(guard.search({ mode: 'text', query: 'x'.repeat(500), limit: 100 })).resolves.toEqual({
        matches: [],
        truncated: false,
      })
    })
  })
})
