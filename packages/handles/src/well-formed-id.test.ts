import { describe, expect, it } from 'vitest'
import { isWellFormedId } from './well-formed-id.ts'

describe('isWellFormedId', () => {
  it.each(['a', 'idn_7f3a9c', 'héllo', '🌍 emoji pair', 'x'.repeat(1024)])('accepts %s', (value) => {
    expect(isWellFormedId(value)).toBe(true)
  })

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(1025)],
    ['a lone high surrogate', 'a\uD83Cb'],
    ['a lone low surrogate', '\uDF0D'],
    ['a number', 1],
    ['null', null],
  ])('refuses %s', (_, value) => {
    expect(isWellFormedId(value)).toBe(false)
  })
})
