import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { base64UrlLength, decodeBase64Url, encodeBase64Url } from './base64url.ts'

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
