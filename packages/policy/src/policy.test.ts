import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPolicy, POLICIES, parsePolicy } from './policy.ts'

describe('policies', () => {
  it('are exactly chat, read and full', () => {
    expect(POLICIES).toEqual(['chat', 'read', 'full'])
    for (const policy of POLICIES) {
      expect(isPolicy(policy)).toBe(true)
      expect(parsePolicy(policy)).toBe(policy)
    }
  })

  it.each([
    'Chat',
    'FULL',
    ' full',
    'full ',
    'read\n',
    '',
    'admin',
    'remote-full',
    'toString',
    '__proto__',
    'constructor',
    'chat,full',
  ])('refuses the string %j', (value) => {
    expect(isPolicy(value)).toBe(false)
    expect(() => parsePolicy(value)).toThrow(TypeError)
  })

  it('refuses every string outside the enum', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 8 }), (value) => {
        fc.pre(!(POLICIES as readonly string[]).includes(value))
        expect(isPolicy(value)).toBe(false)
        expect(() => parsePolicy(value)).toThrow(TypeError)
      }),
      { numRuns: 2000 },
    )
  })

  it('refuses every non-string value, including boxed strings and arrays', () => {
    for (const value of [new String('full'), ['full'], { policy: 'full' }, null, undefined, 1]) {
      expect(isPolicy(value)).toBe(false)
      expect(() => parsePolicy(value)).toThrow(TypeError)
    }
    fc.assert(
      fc.property(fc.anything(), (value) => {
        fc.pre(typeof value !== 'string')
        expect(isPolicy(value)).toBe(false)
      }),
    )
  })

  it('never repeats the rejected value in the error message', () => {
    expect(() => parsePolicy('sk-secret-looking-value')).toThrow(/^policy must be one of chat, read, full$/)
  })
})
