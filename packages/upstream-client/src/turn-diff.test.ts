import { describe, expect, it } from 'vitest'
import { turnDiffOf, unquoteGitPath } from './turn-diff.ts'

describe('unquoteGitPath', () => {
  it('leaves an ordinary path alone', () => {
    expect(unquoteGitPath('src/a b.ts')).toBe('src/a b.ts')
    expect(unquoteGitPath('"')).toBe('"')
    expect(unquoteGitPath('"open')).toBe('"open')
  })

  it('decodes octal UTF-8 bytes and C escapes inside quotes', () => {
    expect(unquoteGitPath('"caf\\303\\251.txt"')).toBe('café.txt')
    expect(unquoteGitPath('"tab\\there"')).toBe('tab\there')
    expect(unquoteGitPath('"q\\"uote\\\\d"')).toBe('q"uote\\d')
    expect(unquoteGitPath('"line\\nbreak"')).toBe('line\nbreak')
    // An escape of no known letter stands for the letter; a trailing backslash for itself.
    expect(unquoteGitPath('"\\x"')).toBe('x')
    expect(unquoteGitPath('"end\\"')).toBe('end\\')
  })
})

describe('turnDiffOf', () => {
  const diff = { file: 'hello.txt', patch: '@@', additions: 2, deletions: 0, status: 'added' as const }

  it('is the user message’s summary diffs, names unquoted', () => {
    expect(turnDiffOf({ role: 'user', summary: { diffs: [diff] } })).toEqual([diff])
    expect(turnDiffOf({ role: 'user', summary: { diffs: [{ ...diff, file: '"caf\\303\\251"' }] } })).toEqual([
      { ...diff, file: 'café' },
    ])
  })

  it('is empty with no summary or no diffs, as the runtime answers', () => {
    expect(turnDiffOf({ role: 'user' })).toEqual([])
    expect(turnDiffOf({ role: 'user', summary: { title: 'x' } })).toEqual([])
  })

  it('is unknown (ask the runtime) for any other shape or an assistant message', () => {
    expect(turnDiffOf({ role: 'assistant', summary: { diffs: [diff] } })).toBeUndefined()
    expect(turnDiffOf({ role: 'user', summary: 'x' })).toBeUndefined()
    expect(turnDiffOf({ role: 'user', summary: null })).toBeUndefined()
    expect(turnDiffOf({ role: 'user', summary: { diffs: [{ file: 'a' }] } })).toBeUndefined()
    expect(turnDiffOf({ role: 'user', summary: { diffs: 'a' } })).toBeUndefined()
  })
})
