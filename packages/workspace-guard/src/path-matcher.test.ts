import { describe, expect, it } from 'vitest'
import { compileGlob, createPathMatcher } from './path-matcher.ts'

describe('createPathMatcher', () => {
  it('ranks a substring query: exact name, name prefix, name substring, path substring', () => {
    const match = createPathMatcher('Index')
    expect(match('src/index.ts')).toBe(1)
    expect(match('src/index')).toBe(0)
    expect(match('src/reindex.ts')).toBe(2)
    expect(match('index-tools/a.ts')).toBe(3)
    expect(match('src/main.ts')).toBeUndefined()
  })

  it.each([
    ['*.ts', 'src/a.ts', true],
    ['*.ts', 'a.tsx', false],
    ['*.TS', 'src/deep/a.ts', true],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/deep/a.ts', false],
    ['src/**/*.ts', 'src/a.ts', true],
    ['src/**/*.ts', 'src/deep/er/a.ts', true],
    ['**/test/*.ts', 'test/a.ts', true],
    ['**/test/*.ts', 'pkg/test/a.ts', true],
    ['?EADME.md', 'README.md', true],
    ['?EADME.md', 'docs/README.md', true],
    ['src/?.ts', 'src/ab.ts', false],
    ['a+b(c)[d]{e}.txt', 'x/a+b(c)[d]{e}.txt', true], // no glob character: a substring query
    ['a+b(*)[d]{e}.txt', 'a+b(c)[d]{e}.txt', true], // regex characters stay literal
  ])('glob %s on %s → %s', (glob, path, expected) => {
    expect(createPathMatcher(glob)(path) !== undefined).toBe(expected)
  })

  it('never lets `*` or `?` cross a separator', () => {
    expect(compileGlob('a*b')('a/b')).toBe(false)
    expect(compileGlob('a?b')('a/b')).toBe(false)
    expect(compileGlob('a**b')('a/x/b')).toBe(true)
  })

  it('matches `**`, `**/` and runs of stars the way the glob syntax defines them', () => {
    expect(compileGlob('**/a')('a')).toBe(true)
    expect(compileGlob('**/a')('x/y/a')).toBe(true)
    expect(compileGlob('**/a')('xa')).toBe(false)
    expect(compileGlob('***/a')('a')).toBe(false) // `**` then `*/`: at least one separator
    expect(compileGlob('***/a')('x/y/a')).toBe(true)
    expect(compileGlob('****/a')('xa')).toBe(true) // `**` then `**/`: anything
    expect(compileGlob('a/**')('a/b/c')).toBe(true)
    expect(compileGlob('a/**')('a/')).toBe(true)
    expect(compileGlob('ſ*')('Straße')).toBe(true)
    expect(compileGlob('?')('😀')).toBe(true) // `?` is one code point
  })

  it('matches adversarial globs without backtracking (deadline 2 s)', () => {
    // A backtracking translation took ~6 s for this glob on a 40-character name, and doubles
    // with every extra `*e`.
    const started = performance.now()
    const name = `${'e'.repeat(40)}.ts`
    expect(createPathMatcher(`${'*e'.repeat(8)}*Q`)(name)).toBeUndefined()
    expect(createPathMatcher(`${'*e'.repeat(50)}*Q`)(`${'e'.repeat(5_000)}.ts`)).toBeUndefined()
    expect(createPathMatcher(`src/${'**/e'.repeat(30)}*Q`)(`src/${'e/'.repeat(2_000)}e`)).toBeUndefined()
    expect(createPathMatcher(`${'?*'.repeat(40)}.ts`)(name)).toBe(0)
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})
