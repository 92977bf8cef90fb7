import { describe, expect, it } from 'vitest'
import { createPathMatcher, globToRegExp } from './path-matcher.ts'

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
    expect(globToRegExp('a*b').test('a/b')).toBe(false)
    expect(globToRegExp('a?b').test('a/b')).toBe(false)
    expect(globToRegExp('a**b').test('a/x/b')).toBe(true)
  })
})
