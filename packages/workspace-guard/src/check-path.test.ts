import { posix } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkPath, MAX_PATH_LENGTH } from './check-path.ts'
import { GUARD_MESSAGES } from './errors.ts'

const DENIED = { ok: false, code: 'ERR_GUARD_DENIED', message: GUARD_MESSAGES.ERR_GUARD_DENIED }

describe('checkPath: shape', () => {
  it.each([
    ['an empty path', ''],
    ['the root itself', '.'],
    ['only separators', '//'],
    ['an absolute path', '/etc/passwd'],
    ['a leading `..`', '../x'],
    ['a `..` in the middle', 'a/../b'],
    ['a trailing `..`', 'a/..'],
    ['a bare `..`', '..'],
    ['a backslash', 'a\\b'],
    ['a backslash traversal', '..\\x'],
    ['a NUL byte', 'a\0b.txt'],
    ['a path over the length limit', 'a/'.repeat(MAX_PATH_LENGTH / 2 + 1)],
    ['a component over 255 bytes', `a/${'é'.repeat(128)}`],
    ['three dots (Windows-style parent of parent)', '.../x'],
    ['four dots', '..../x'],
    ['a newline', 'a\nb'],
    ['a C1 control character', 'a\u0085b'],
    ['a DEL character', 'a\u007fb'],
    ['a bidi override', 'a\u202eb.txt'],
    ['a zero-width space', '.e\u200bnv'],
    ['a lone surrogate', 'a\ud800b'],
    ['a replacement character', 'a\ufffdb'],
    ['FULLWIDTH FULL STOP twice', '\uff0e\uff0e/etc/passwd'],
    ['ONE DOT LEADER twice', '\u2024\u2024/etc/passwd'],
    ['TWO DOT LEADER', '\u2025/etc/passwd'],
    ['a fullwidth dot inside a name', 'a\uff0etxt'],
    ['DIVISION SLASH', '..\u2215etc'],
    ['FULLWIDTH SOLIDUS', 'a\uff0fb'],
    ['FULLWIDTH REVERSE SOLIDUS', 'a\uff3cb'],
    ['SET MINUS (backslash lookalike)', '..\u2216etc'],
    ['a combining long solidus overlay', 'a\u0338b'],
  ])('refuses %s', (_label, path) => {
    expect(checkPath(path)).toEqual(DENIED)
  })

  it.each([
    ['src/index.ts', 'src/index.ts'],
    ['./src/index.ts', 'src/index.ts'],
    ['src//index.ts', 'src/index.ts'],
    ['src/./index.ts', 'src/index.ts'],
    ['src/', 'src'],
    ['README.md', 'README.md'],
    ['%2e%2e/etc/hosts', '%2e%2e/etc/hosts'],
    ['..%2f..%2fetc', '..%2f..%2fetc'],
    ['...a', '...a'],
    ['日本語/Ünïcödé.md', '日本語/Ünïcödé.md'],
  ])('accepts %j as %j', (path, normalised) => {
    expect(checkPath(path)).toEqual({ ok: true, path: normalised })
  })

  it('accepts a path of exactly the length limit', () => {
    const path = `${'a/'.repeat(MAX_PATH_LENGTH / 2 - 1)}ab`
    expect(path).toHaveLength(MAX_PATH_LENGTH)
    expect(checkPath(path).ok).toBe(true)
  })

  it('refuses values that are not strings', () => {
    for (const value of [undefined, null, 42, ['a'], { path: 'a' }]) expect(checkPath(value)).toEqual(DENIED)
  })
})

// Segments an attacker would try, including encodings the guard must NOT decode and Unicode
// dots that some layers fold into ASCII.
const TRICKY_SEGMENTS = [
  '..',
  '.',
  '',
  '...',
  '%2e%2e',
  '%2e',
  '%252e%252e',
  '..%2f',
  '%2e%2e%2f',
  '%c0%ae%c0%ae',
  '..;',
  '\uff0e\uff0e',
  '\uff0e',
  '\u2024\u2024',
  '\u2025',
  '\u2026',
  '.\u200b.',
  '..\u2215',
  '\uff0f',
  '..\\',
  '~',
  'a',
  'src',
  '.env.example',
]

describe('checkPath: property', () => {
  const segment = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...TRICKY_SEGMENTS) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  )
  const path = fc
    .tuple(fc.boolean(), fc.array(segment, { maxLength: 12 }), fc.constantFrom('/', '//', '\\'))
    .map(([leading, segments, separator]) => (leading ? separator : '') + segments.join(separator))

  it('rejects, or yields a path whose resolution stays inside the root', () => {
    fc.assert(
      fc.property(path, (candidate) => {
        const result = checkPath(candidate)
        if (!result.ok) return
        const resolved = posix.resolve('/workspace/root', result.path)
        expect(resolved.startsWith('/workspace/root/')).toBe(true)
        for (const component of result.path.split('/')) {
          expect(['', '.', '..']).not.toContain(component)
          expect(component.normalize('NFKC')).not.toMatch(/^\.+$|[/\\]/)
        }
      }),
      { numRuns: 5000 },
    )
  })

  it('is idempotent: a normalised path checks to itself', () => {
    fc.assert(
      fc.property(path, (candidate) => {
        const result = checkPath(candidate)
        if (result.ok) expect(checkPath(result.path)).toEqual(result)
      }),
      { numRuns: 2000 },
    )
  })
})
