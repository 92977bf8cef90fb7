import { describe, expect, it } from 'vitest'
import { CredentialError } from './errors.ts'
import {
  assertOAuthPair,
  assertOperatorKey,
  assertPolicy,
  assertUsername,
  isPolicy,
  isValidUsername,
} from './validate-input.ts'

function thrownCode(fn: () => void): string | undefined {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(CredentialError)
    return (error as CredentialError).code
  }
  return undefined
}

describe('usernames', () => {
  it.each(['owner', 'discord', 'a', 'ci-bot', 'team_2', 'x0', `a${'b'.repeat(31)}`])('accepts %j', (name) => {
    expect(isValidUsername(name)).toBe(true)
    expect(thrownCode(() => assertUsername(name))).toBeUndefined()
  })

  it.each([
    ['empty', ''],
    ['uppercase', 'Owner'],
    ['all uppercase', 'OWNER'],
    ['dot-dot', '..'],
    ['a single dot', '.'],
    ['a leading dot', '.hidden'],
    ['a slash', 'a/b'],
    ['a traversal', '../etc'],
    ['a backslash', 'a\\b'],
    ['a leading digit', '1abc'],
    ['a leading dash', '-abc'],
    ['a leading underscore', '_abc'],
    ['a space', 'a b'],
    ['a trailing newline', 'abc\n'],
    ['a NUL byte', 'abc\u0000'],
    ['a dot inside', 'a.b'],
    ['the map file name', 'oauth-map.json'],
    ['non-ASCII', 'ówner'],
    ['33 characters', `a${'b'.repeat(32)}`],
    ['a number', 42],
    ['undefined', undefined],
  ])('rejects %s with ERR_CREDENTIALS_INVALID_USERNAME', (_name, value) => {
    expect(isValidUsername(value)).toBe(false)
    expect(thrownCode(() => assertUsername(value))).toBe('ERR_CREDENTIALS_INVALID_USERNAME')
  })
})

describe('policies', () => {
  it.each(['chat', 'read', 'full'])('accepts %s', (policy) => {
    expect(isPolicy(policy)).toBe(true)
    expect(thrownCode(() => assertPolicy(policy))).toBeUndefined()
  })

  it.each(['admin', 'FULL', '', 'full ', undefined, 3])(
    'rejects %j with ERR_CREDENTIALS_INVALID_POLICY',
    (value) => {
      expect(isPolicy(value)).toBe(false)
      expect(thrownCode(() => assertPolicy(value))).toBe('ERR_CREDENTIALS_INVALID_POLICY')
    },
  )
})

describe('operator keys', () => {
  it.each([
    ['too short', 'short-key'],
    ['too long', 'k'.repeat(513)],
    ['with a space', `${'k'.repeat(20)} ${'k'.repeat(20)}`],
    ['empty', ''],
    ['not a string', 12345],
  ])('rejects a key that is %s with ERR_CREDENTIALS_INVALID_KEY and without echoing it', (_name, key) => {
    try {
      assertOperatorKey(key)
      expect.unreachable()
    } catch (error) {
      expect((error as CredentialError).code).toBe('ERR_CREDENTIALS_INVALID_KEY')
      if (typeof key === 'string' && key.length > 0) expect((error as Error).message).not.toContain(key)
    }
  })

  it('accepts a key that passes the key rules', () => {
    expect(thrownCode(() => assertOperatorKey('k'.repeat(32)))).toBeUndefined()
  })
})

describe('OAuth pairs', () => {
  it.each([
    ['an http issuer', 'http://issuer.example', 'sub'],
    ['a non-URL issuer', 'issuer', 'sub'],
    ['an issuer with a space', 'https://issuer.example/a b', 'sub'],
    ['an empty subject', 'https://issuer.example', ''],
    ['a subject with a newline', 'https://issuer.example', 'a\nb'],
    ['a 256-character subject', 'https://issuer.example', 's'.repeat(256)],
  ])('rejects %s with ERR_CREDENTIALS_INVALID_MAPPING', (_name, issuer, subject) => {
    expect(thrownCode(() => assertOAuthPair(issuer, subject))).toBe('ERR_CREDENTIALS_INVALID_MAPPING')
  })

  it('accepts an HTTPS issuer and an opaque subject', () => {
    expect(
      thrownCode(() => assertOAuthPair('https://login.example.com/tenant/v2.0', 'AbC|123 x')),
    ).toBeUndefined()
  })
})
