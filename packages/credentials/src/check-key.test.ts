import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkKey } from './check-key.ts'

const valid32 = 'a'.repeat(32)

describe('checkKey', () => {
  it.each([
    ['undefined', undefined, 'ERR_CREDENTIALS_MISSING'],
    ['the empty string', '', 'ERR_CREDENTIALS_MISSING'],
    ['31 characters', 'a'.repeat(31), 'ERR_CREDENTIALS_WEAK'],
    ['one character', 'x', 'ERR_CREDENTIALS_WEAK'],
    ['513 characters', 'a'.repeat(513), 'ERR_CREDENTIALS_WEAK'],
    ['an inner space', `${'a'.repeat(20)} ${'a'.repeat(20)}`, 'ERR_CREDENTIALS_MALFORMED'],
    ['a trailing newline', `${valid32}\n`, 'ERR_CREDENTIALS_MALFORMED'],
    ['a tab', `${valid32}\t`, 'ERR_CREDENTIALS_MALFORMED'],
    ['a NUL byte', `${valid32}\u0000`, 'ERR_CREDENTIALS_MALFORMED'],
    ['DEL (0x7f)', `${valid32}\u007f`, 'ERR_CREDENTIALS_MALFORMED'],
    ['a non-ASCII letter', `${valid32}é`, 'ERR_CREDENTIALS_MALFORMED'],
    ['an emoji', `${valid32}🔑`, 'ERR_CREDENTIALS_MALFORMED'],
    ['a non-breaking space', `${valid32}\u00a0`, 'ERR_CREDENTIALS_MALFORMED'],
    ['whitespace only', ' '.repeat(40), 'ERR_CREDENTIALS_MALFORMED'],
    ['a short key with a space (malformed wins over weak)', 'a b', 'ERR_CREDENTIALS_MALFORMED'],
  ])('refuses %s', (_name, key, code) => {
    const result = checkKey(key)
    expect(result).toMatchObject({ ok: false, code })
  })

  it.each([
    ['exactly 32 characters', valid32],
    ['exactly 512 characters', 'Z'.repeat(512)],
    ['every printable symbol', '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~0123456789'],
    ['a generated-style key', 'agk_3q2-7wEXAMPLEexampleEXAMPLEexampleEXAMPLEex'],
  ])('accepts %s', (_name, key) => {
    expect(checkKey(key)).toEqual({ ok: true })
  })

  it('never puts the key into the message', () => {
    const secret = `s3cr3t-${'q'.repeat(10)}`
    for (const key of [secret, `${secret} x`, `${secret}${'q'.repeat(600)}`]) {
      const result = checkKey(key)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.message).not.toContain('s3cr3t')
    }
  })

  it('accepts every string of 32-512 printable non-whitespace ASCII characters', () => {
    const printable = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code))
    fc.assert(
      fc.property(fc.array(printable, { minLength: 32, maxLength: 512 }), (chars) => {
        expect(checkKey(chars.join(''))).toEqual({ ok: true })
      }),
    )
  })

  it('refuses every string holding a character outside 0x21-0x7E as malformed', () => {
    const outside = fc
      .oneof(fc.integer({ min: 0, max: 0x20 }), fc.integer({ min: 0x7f, max: 0xffff }))
      .map((code) => String.fromCharCode(code))
    const printable = fc.string({ unit: fc.constantFrom(...'abcXYZ019!~'), maxLength: 600 })
    fc.assert(
      fc.property(printable, outside, fc.nat(), (base, bad, at) => {
        const position = base.length === 0 ? 0 : at % base.length
        const key = base.slice(0, position) + bad + base.slice(position)
        expect(checkKey(key)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_MALFORMED' })
      }),
    )
  })

  it('classifies well-formed keys purely by length', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'Ab3-_~'), minLength: 1, maxLength: 700 }), (key) => {
        const expected =
          key.length >= 32 && key.length <= 512 ? { ok: true } : { ok: false, code: 'ERR_CREDENTIALS_WEAK' }
        expect(checkKey(key)).toMatchObject(expected)
      }),
    )
  })
})
