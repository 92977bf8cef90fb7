import { copyFileSync, linkSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorkspaceGuard, type SearchMatch, type WorkspaceGuard } from '../src/index.ts'
import { createWorkspaceFixture, expectCode, type WorkspaceFixture } from './helpers/workspace-fixture.ts'

const NEEDLE = 'zebraNeedle'
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n'

let fx: WorkspaceFixture

beforeAll(() => {
  fx = createWorkspaceFixture()
  fx.write('src/app.ts', `export function ${NEEDLE}Fn() {\n  return 1\n}\n// ${NEEDLE} in a comment\n`)
  fx.write('README.md', `# Project\n\nFind the ${NEEDLE.toUpperCase()} here.\n`)
  fx.write('config/.env.example', `TOKEN=${NEEDLE}\n`)
  fx.write('src/env/index.ts', `export const envNeedle = '${NEEDLE}'\n`)
  // Denied places, each holding the needle in its name or content.
  fx.write('.env', `TOKEN=${NEEDLE}\n`)
  fx.write('.env.local', `TOKEN=${NEEDLE}\n`)
  fx.write('.git/config', `${NEEDLE}\n`)
  fx.write('.GIT/HEAD', `${NEEDLE}\n`)
  fx.write('secrets/zebraNeedle.txt', `${NEEDLE}\n`)
  fx.write('.ssh/zebraNeedle_ed25519', `${NEEDLE}\n`)
  fx.write('keys/server.pem', `${NEEDLE}\n`)
  fx.write('src/client_secret.ts', `export function ${NEEDLE}Secret() {}\n`)
  fx.write('\uff0eenv', `${NEEDLE}\n`) // fullwidth-dot ".env"
  // Files search must skip: binary, too large, private key content, hard-linked.
  fx.write('assets/zebraNeedle.bin', Buffer.concat([Buffer.from(NEEDLE), Buffer.from([0, 1, 2])]))
  fx.write('logs/big-zebraNeedle.log', `${NEEDLE}\n${'x'.repeat(300 * 1024)}\n`)
  fx.write('notes/zebraNeedle-key.txt', `${NEEDLE}\n${PEM}`)
  fx.write('links/zebraNeedle-twin.txt', `${NEEDLE}\n`)
  linkSync(join(fx.root, 'links/zebraNeedle-twin.txt'), join(fx.root, 'links/twin-b.txt'))
  // Symlinks: never followed, never listed.
  fx.writeOutside('zebraNeedle-outside.txt', `${NEEDLE} ${fx.canary}\n`)
  fx.link(fx.outside, 'outside-dir')
  fx.link(join(fx.outside, 'zebraNeedle-outside.txt'), 'zebraNeedle-link.txt')
  fx.link('.env', 'zebraNeedle-notes.txt')
  fx.fifo('zebraNeedle.fifo')
  // Excluded by default.
  fx.write('node_modules/pkg/zebraNeedle.js', `module.exports = '${NEEDLE}'\n`)
  // Flags, regex characters, and many matches.
  fx.write(
    'docs/cli.md',
    'Run with --help to list flags.\nUse -e to pass a pattern.\nMatch a.*b literally.\n',
  )
  fx.write('docs/many.txt', Array.from({ length: 150 }, (_, i) => `repeat line ${i}`).join('\n'))
  // Symbols in several languages.
  fx.write('lib/models.py', 'class ZebraModel:\n    def zebra_needle(self):\n        pass\n')
  fx.write('lib/server.go', 'package lib\nfunc ZebraNeedle() {}\ntype ZebraServer struct{}\n')
  fx.write('lib/lib.rs', 'pub struct ZebraNeedle;\nimpl ZebraNeedle {\n    fn zebra(&self) {}\n}\n')
  fx.write('lib/Zebra.java', 'public class Zebra {\n    public void zebraNeedle() {}\n}\n')
})

afterAll(() => fx.remove())

const ENGINES = [
  ['ripgrep', {}],
  ['built-in', { ripgrepPath: false as const }],
] as const

const DENIED_FRAGMENTS = [
  '.env',
  '.git',
  '.GIT',
  'secret',
  '.ssh',
  '.pem',
  'outside',
  '-link',
  '-notes',
  'fifo',
  '\uff0e',
]

function expectNothingDenied(matches: readonly SearchMatch[]): void {
  for (const match of matches) {
    for (const fragment of DENIED_FRAGMENTS) {
      if (match.path === 'config/.env.example' && fragment === '.env') continue
      expect(match.path).not.toContain(fragment)
    }
    expect(match.preview ?? '').not.toContain(fx.canary)
    expect(match.path).not.toMatch(/^\/|(^|\/)\.\.(\/|$)/)
  }
}

/** Every result is something `read` returns. */
async function expectReadable(guard: WorkspaceGuard, matches: readonly SearchMatch[]): Promise<void> {
  for (const match of matches)
    await expect(guard.read(match.path)).resolves.toMatchObject({ path: match.path })
}

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
      expectNothingDenied(result.matches)
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
        expectNothingDenied(result.matches)
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
        expectNothingDenied(result.matches)
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
      expectNothingDenied(result.matches)
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
      expectNothingDenied(result.matches)
    })

    it('stops at the file budget and says truncated', async () => {
      const small = createWorkspaceGuard({ root: fx.root, ...engineOptions, fileBudget: 3 })
      const result = await small.search({ mode: 'files', query: '*', limit: 100 })
      expect(result.truncated).toBe(true)
      expect(result.matches.length).toBeLessThanOrEqual(3)
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
    copyFileSync('/usr/bin/rg', copy)
    const guard = createWorkspaceGuard({ root: fx.root, ripgrepPath: copy })
    unlinkSync(copy)
    const result = await guard.search({ mode: 'text', query: '--help' })
    expect(result.matches.map((m) => m.path)).toEqual(['docs/cli.md'])
  })
})
