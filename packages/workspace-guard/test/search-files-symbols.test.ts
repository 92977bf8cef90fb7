import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorkspaceGuard, type WorkspaceGuard } from '../src/index.ts'
import {
  createSearchFixture,
  ENGINES,
  expectNothingDenied,
  expectReadable,
} from './helpers/search-fixture.ts'
import type { WorkspaceFixture } from './helpers/workspace-fixture.ts'

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

  describe('files', () => {
    it('lists only allowed, readable files whose path contains the query', async () => {
      // Every other "zebra" path is denied, a symlink, a FIFO, binary, oversize, a private key,
      // hard-linked, or under node_modules.
      const result = await guard.search({ mode: 'files', query: 'zebra', limit: 100 })
      expect(result).toEqual({ matches: [{ path: 'lib/Zebra.java' }], truncated: false })
      await expectReadable(guard, result.matches)
    })

    it('ranks an exact file name first', async () => {
      const result = await guard.search({ mode: 'files', query: 'app.ts' })
      expect(result.matches[0]).toEqual({ path: 'src/app.ts' })
      const index = await guard.search({ mode: 'files', query: 'index.ts' })
      expect(index.matches).toEqual([{ path: 'src/env/index.ts' }])
    })

    it('matches globs: *, ?, ** and path globs', async () => {
      const paths = async (query: string): Promise<string[]> =>
        (await guard.search({ mode: 'files', query, limit: 100 })).matches.map((m) => m.path).sort()
      expect(await paths('*.ts')).toEqual(['src/app.ts', 'src/env/index.ts'])
      expect(await paths('src/*.ts')).toEqual(['src/app.ts'])
      expect(await paths('src/**/*.ts')).toEqual(['src/app.ts', 'src/env/index.ts'])
      expect(await paths('?EADME.md')).toEqual(['README.md'])
      expect(await paths('lib/*')).toEqual(['lib/Zebra.java', 'lib/lib.rs', 'lib/models.py', 'lib/server.go'])
    })

    it('never lists denied names, symlinks, FIFOs, binary or oversize files', async () => {
      for (const query of [
        'env',
        'git',
        'secret',
        'ssh',
        'pem',
        'link',
        'notes',
        'fifo',
        'bin',
        'log',
        'twin',
        '*',
      ]) {
        const result = await guard.search({ mode: 'files', query, limit: 100 })
        expectNothingDenied(fx, result.matches)
        for (const match of result.matches)
          expect(match.path).not.toMatch(/assets|logs|notes|links|node_modules/)
      }
      const env = await guard.search({ mode: 'files', query: '.env' })
      expect(env.matches).toEqual([{ path: 'config/.env.example' }])
    })

    it('respects the limit and reports truncation', async () => {
      const result = await guard.search({ mode: 'files', query: '*', limit: 3 })
      expect(result.matches).toHaveLength(3)
      expect(result.truncated).toBe(true)
    })
  })

  describe('symbols', () => {
    it('finds definitions in TypeScript, Python, Go, Rust and Java, exact names first', async () => {
      const result = await guard.search({ mode: 'symbols', query: 'zebraNeedle', limit: 100 })
      expectNothingDenied(fx, result.matches)
      expect(result.matches.map(({ path, line, kind, name }) => `${name} ${kind} ${path}:${line}`)).toEqual([
        'zebraNeedle method lib/Zebra.java:2',
        'ZebraNeedle struct lib/lib.rs:1',
        'ZebraNeedle impl lib/lib.rs:2',
        'ZebraNeedle function lib/server.go:2',
        'zebraNeedleFn function src/app.ts:1',
      ])
      expect(result.truncated).toBe(false)
      await expectReadable(guard, result.matches)
    })

    it('reports the column of the name and the definition line', async () => {
      const result = await guard.search({ mode: 'symbols', query: 'ZebraModel' })
      expect(result.matches).toEqual([
        {
          path: 'lib/models.py',
          line: 1,
          column: 7,
          kind: 'class',
          name: 'ZebraModel',
          preview: 'class ZebraModel:',
        },
      ])
    })

    it('respects the limit', async () => {
      const result = await guard.search({ mode: 'symbols', query: 'zebra', limit: 2 })
      expect(result.matches).toHaveLength(2)
      expect(result.truncated).toBe(true)
    })
  })
})
