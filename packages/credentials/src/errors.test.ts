import { describe, expect, it } from 'vitest'
import { CredentialError } from './errors.ts'

describe('CredentialError.isInstance', () => {
  it.each([
    ['one of its own', new CredentialError('ERR_CREDENTIALS_LOCKED', 'x'), true],
    [
      // Another copy of the package: another class, the same registered symbol.
      'one of another copy of the package',
      Object.assign(new Error('x'), { [Symbol.for('sallyport.credentials.CredentialError')]: true }),
      true,
    ],
    [
      'an Error with the name and a code only',
      Object.assign(new Error('x'), { name: 'CredentialError', code: 'ERR_CREDENTIALS_LOCKED' }),
      false,
    ],
    ['a plain Error', new Error('x'), false],
    ['undefined', undefined, false],
  ])('%s → %s', (_label, value, expected) => {
    expect(CredentialError.isInstance(value)).toBe(expected)
  })
})
