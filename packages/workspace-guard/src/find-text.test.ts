import { describe, expect, it } from 'vitest'
import { containsText, findText, PREVIEW_LENGTH, previewOf } from './find-text.ts'

describe('findText', () => {
  const text = 'alpha\n  Beta gamma\r\nbeta beta\n\nlast BETA'

  it('finds lines case-insensitively, one hit per line, with 1-based line and column', () => {
    expect(findText(text, 'beta', false, 10)).toEqual([
      { line: 2, column: 3, preview: 'Beta gamma' },
      { line: 3, column: 1, preview: 'beta beta' },
      { line: 5, column: 6, preview: 'last BETA' },
    ])
  })

  it('matches case exactly when asked', () => {
    expect(findText(text, 'BETA', true, 10)).toEqual([{ line: 5, column: 6, preview: 'last BETA' }])
  })

  it('stops at max', () => {
    expect(findText(text, 'beta', false, 2)).toHaveLength(2)
  })

  it('treats regular-expression characters literally', () => {
    expect(findText('a.*b\naxxb\n', '.*', false, 10)).toEqual([{ line: 1, column: 2, preview: 'a.*b' }])
    expect(findText('--help\n', '--help', false, 10)).toEqual([{ line: 1, column: 1, preview: '--help' }])
  })

  it('keeps columns right around U+0130, whose lower case is longer', () => {
    expect(findText('İİ x İstanbul', 'istanbul', false, 1)).toEqual([
      { line: 1, column: 6, preview: 'İİ x İstanbul' },
    ])
  })

  it('agrees with containsText', () => {
    for (const query of ['beta', 'BETA', 'zeta', 'a\n', 'gamma\r']) {
      for (const caseSensitive of [true, false]) {
        expect(containsText(text, query, caseSensitive)).toBe(
          findText(text, query, caseSensitive, 1).length > 0,
        )
      }
    }
  })
})

describe('previewOf', () => {
  it('cuts a long line to a window that shows the match', () => {
    const line = `${'x'.repeat(1000)}NEEDLE${'y'.repeat(1000)}`
    const preview = previewOf(line, 1000)
    expect(preview.length).toBeLessThanOrEqual(PREVIEW_LENGTH)
    expect(preview).toContain('NEEDLE')
  })

  it('never splits a surrogate pair', () => {
    const line = '😀'.repeat(300)
    for (const index of [0, 1, 41, 300, 599]) {
      expect(previewOf(line, index)).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/u)
    }
  })
})
