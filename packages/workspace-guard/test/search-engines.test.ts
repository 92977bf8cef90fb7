import { chmodSync, copyFileSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorkspaceGuard } from '../src/index.ts'
import {
  createSearchFixture,
  ENGINES,
  expectNothingDenied,
  NEEDLE,
  RIPGREP,
} from './helpers/search-fixture.ts'
import { createWorkspaceFixture, type WorkspaceFixture } from './helpers/workspace-fixture.ts'

let fx: WorkspaceFixture
beforeAll(() => {
  fx = createSearchFixture()
})
afterAll(() => fx.remove())

describe.each(ENGINES)('search (%s engine)', (_engine, engineOptions) => {
  describe('budgets', () => {
    it('stops at the time budget and says truncated', async () => {
      let clock = 0
      const slow = createWorkspaceGuard({
        root: fx.root,
        ...engineOptions,
        timeBudgetMs: 1000,
        now: () => (clock += 400),
      })
      const result = await slow.search({ mode: 'text', query: 'e', limit: 100 })
      expect(result.truncated).toBe(true)
      expectNothingDenied(fx, result.matches)
    })

    it('stops at the file budget and says truncated', async () => {
      const small = createWorkspaceGuard({ root: fx.root, ...engineOptions, fileBudget: 3 })
      const result = await small.search({ mode: 'files', query: '*', limit: 100 })
      expect(result.truncated).toBe(true)
      expect(result.matches.length).toBeLessThanOrEqual(3)
    })
  })
})

describe('search engines', () => {
  it('agree on every mode when nothing is truncated', async () => {
    const viaRipgrep = createWorkspaceGuard({ root: fx.root })
    const builtin = createWorkspaceGuard({ root: fx.root, ripgrepPath: false })
    for (const options of [
      { mode: 'text', query: NEEDLE, limit: 100 },
      { mode: 'text', query: 'repeat line 1', limit: 100 },
      { mode: 'files', query: 'a', limit: 100 },
      { mode: 'files', query: '**/*', limit: 100 },
      { mode: 'symbols', query: 'zebra', limit: 100 },
    ] as const) {
      const a = await viaRipgrep.search(options)
      const b = await builtin.search(options)
      expect(a.truncated).toBe(false)
      expect(a).toEqual(b)
    }
  })

  it('falls back to the built-in engine when the ripgrep binary disappears', async () => {
    const copy = join(fx.base, 'rg-copy')
    copyFileSync(RIPGREP, copy)
    const guard = createWorkspaceGuard({ root: fx.root, ripgrepPath: copy })
    unlinkSync(copy)
    const result = await guard.search({ mode: 'text', query: '--help' })
    expect(result.matches.map((m) => m.path)).toEqual(['docs/cli.md'])
  })

  it('counts each file once against the file budget after falling back', async () => {
    const small = createWorkspaceFixture()
    try {
      for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) small.write(name, 'x\n')
      const copy = join(small.base, 'rg-copy')
      copyFileSync(RIPGREP, copy)
      // Exactly enough budget for the four files: counted twice, it ran out after two.
      const guard = createWorkspaceGuard({ root: small.root, ripgrepPath: copy, fileBudget: 4 })
      unlinkSync(copy)
      const result = await guard.search({ mode: 'files', query: '*.txt', limit: 100 })
      expect(result).toEqual({
        matches: [{ path: 'a.txt' }, { path: 'b.txt' }, { path: 'c.txt' }, { path: 'd.txt' }],
        truncated: false,
      })
    } finally {
      small.remove()
    }
  })
})

describe('ripgrep invocation', () => {
  it('runs rg without a shell, with an empty environment, --no-config, no symlinks, and the query after -e', async () => {
    const log = join(fx.base, 'rg-args.log')
    const wrapper = join(fx.base, 'rg-wrapper')
    // Records its arguments one per line, then its environment, then runs the real ripgrep.
    writeFileSync(
      wrapper,
      `#!/bin/sh\nprintf 'ARG %s\\n' "$@" >> '${log}'\n/usr/bin/env | sed 's/^/ENV /' >> '${log}'\nexec '${RIPGREP}' "$@"\n`,
    )
    chmodSync(wrapper, 0o755)
    const guard = createWorkspaceGuard({ root: fx.root, ripgrepPath: wrapper })
    writeFileSync(log, '')
    const result = await guard.search({ mode: 'text', query: '--files' })
    expectNothingDenied(fx, result.matches)
    const lines = readFileSync(log, 'utf8').trim().split('\n')
    const args = lines.filter((line) => line.startsWith('ARG ')).map((line) => line.slice(4))
    // PWD is set by /bin/sh itself; everything else would come from our environment.
    expect(lines.filter((line) => line.startsWith('ENV ') && !line.startsWith('ENV PWD='))).toEqual([])
    for (const flag of ['--no-config', '--no-follow', '--no-ignore', '--hidden', '--null', '--fixed-strings'])
      expect(args).toContain(flag)
    expect(args).not.toContain('--follow')
    expect(args).not.toContain('-L')
    const query = args.indexOf('-e')
    expect(args.slice(query, query + 4)).toEqual(['-e', '--files', '--', '.'])
    expect(args.at(-1)).toBe('.')
  })
})
