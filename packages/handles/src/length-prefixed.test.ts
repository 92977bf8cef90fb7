import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { encodeLengthPrefixed } from './length-prefixed.ts'

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
