import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  base64UrlLength,
  decodeBase64Url,
  encodeBase64Url,
  encodeLengthPrefixed,
  isWellFormedId,
} from './encoding.ts'

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

describe('encodeLengthPrefixed', () => {
  it('never encodes two different lists to the same bytes', () => {
    const list = fc.array(fc.string({ unit: 'grapheme', maxLength: 6 }), { maxLength: 4 })
    fc.assert(
      fc.property(list, list, (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b))
        expect(Buffer.from(encodeLengthPrefixed(a)).equals(Buffer.from(encodeLengthPrefixed(b)))).toBe(false)
      }),
      { numRuns: 1000 },
    )
  })

  it('writes a 4-byte big-endian UTF-8 length before each part', () => {
    expect([...encodeLengthPrefixed(['ab', '', 'é'])]).toEqual([
      0, 0, 0, 2, 97, 98, 0, 0, 0, 0, 0, 0, 0, 2, 0xc3, 0xa9,
    ])
  })
})

describe('base64url', () => {
  it('encodes like Buffer and round-trips any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const text = encodeBase64Url(bytes)
        expect(text).toBe(Buffer.from(bytes).toString('base64url'))
        expect(text.length).toBe(base64UrlLength(bytes.length))
        expect(decodeBase64Url(text)).toEqual(bytes)
      }),
      { numRuns: 500 },
    )
  })

  it('decodes at most one string to each byte sequence', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{0,40}$/), (text) => {
        const bytes = decodeBase64Url(text)
        if (bytes !== null) expect(encodeBase64Url(bytes)).toBe(text)
      }),
      { numRuns: 1000 },
    )
  })

  it.each([
    ['padding', 'AA=='],
    ['standard alphabet', 'ab+/'],
    ['whitespace', 'AA AA'],
    ['a non-ASCII character', 'AAé'],
    ['length 4n + 1', 'AAAAA'],
    ['unused bits set after one byte', 'AB'],
    ['unused bits set after two bytes', 'AAB'],
  ])('refuses %s', (_, text) => {
    expect(decodeBase64Url(text)).toBeNull()
  })
})
