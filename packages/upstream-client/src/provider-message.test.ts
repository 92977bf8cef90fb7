import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PROVIDER_MESSAGE_MAX, redactSecrets, sanitizeProviderMessage } from './provider-message.ts'

describe('sanitizeProviderMessage', () => {
  it('keeps the sentence a person needs', () => {
    expect(sanitizeProviderMessage('Unable to connect. Is the computer able to access the url?')).toBe(
      'Unable to connect. Is the computer able to access the url?',
    )
    expect(sanitizeProviderMessage('Rate limit exceeded for model gpt-4o-mini (429)')).toBe(
      'Rate limit exceeded for model gpt-4o-mini (429)',
    )
    expect(
      sanitizeProviderMessage('Cannot connect to API: https://api.openai.com/v1/chat/completions failed'),
    ).toBe('Cannot connect to API: https://api.openai.com/v1/chat/completions failed')
  })

  it('removes API keys, bearer tokens and key=value secrets', () => {
    const cases = [
      'Incorrect API key provided: sk-proj-AbCdEf123456789xyzXYZ. You can find your API key at …',
      'invalid x-api-key: abcdefghijklmnop12345678',
      'request with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl refused',
      'GET https://example.test/v1/models?key=AIzaSyA1b2C3d4E5f6G7h8I9j0 failed',
      'token=ghp_0123456789abcdefABCDEF0123456789abcd is not valid',
      'the key 3f9a1c0e7b2d4a6f8c1e3b5d7f9a2c4e6b8d0f1a was revoked',
    ]
    const secrets = [
      'sk-proj-AbCdEf123456789xyzXYZ',
      'abcdefghijklmnop12345678',
      'eyJhbGciOiJIUzI1NiJ9',
      'AIzaSyA1b2C3d4E5f6G7h8I9j0',
      'ghp_0123456789abcdefABCDEF0123456789abcd',
      '3f9a1c0e7b2d4a6f8c1e3b5d7f9a2c4e6b8d0f1a',
    ]
    cases.forEach((text, i) => {
      const out = sanitizeProviderMessage(text) as string
      expect(out).not.toContain(secrets[i])
      expect(out).toContain('[redacted]')
    })
  })

  it('removes the shapes a black-box review got through (AWS ids, short JWTs, Bearer:, pairs, split keys)', () => {
    const cases: [string, string][] = [
      ['aws AKIAIOSFODNN7EXAMPLE here', 'AKIAIOSFODNN7EXAMPLE'],
      ['jwt eyJhbGci.eyJzdWIi.c2ln end', 'eyJhbGci.eyJzdWIi'],
      ['Authorization Bearer:TOKENabc123 refused', 'TOKENabc123'],
      ['private_key: MIIEvQIBADANBgkq refused', 'MIIEvQIBADANBgkq'],
      ['url ...&sig=SASSIG0123abc&se=2026', 'SASSIG0123abc'],
      ['client_secret=abcDEF123', 'abcDEF123'],
      ['X-Amz-Signature=0a1b2c3d4e', '0a1b2c3d4e'],
      ['key sk-proj-Ab​CdEf​0123456789xyz split', 'CdEf'],
      ['full-width ｓｋ－ｐｒｏｊ－ＡｂＣｄ０１２３４５６７８９ key', 'ＡｂＣｄ'],
    ]
    for (const [text, secret] of cases) {
      const out = sanitizeProviderMessage(text) as string
      expect(out, text).not.toContain(secret)
    }
    expect(sanitizeProviderMessage('https://user:p@ss@host.example/x failed')).toBe(
      'https://host.example/x failed',
    )
    expect(sanitizeProviderMessage('see //user:pass@host/x')).toBe('see //host/x')
    expect(sanitizeProviderMessage('share \\\\srv\\share\\k.txt')).toBe('share [path]')
  })

  it('keeps ordinary words that merely sit near "token"', () => {
    expect(sanitizeProviderMessage('Your authentication token may be missing')).toBe(
      'Your authentication token may be missing',
    )
  })

  it('removes the secrets the stack knows by value, whatever their shape', () => {
    expect(
      sanitizeProviderMessage('rejected the credential "hunter2Secret" (quota)', ['hunter2Secret']),
    ).toBe('rejected the credential "[redacted]" (quota)')
    // Too short to match by value without hitting words.
    expect(redactSecrets('a b c', ['b'])).toBe('a b c')
    // Operators' logs keep paths and white space.
    expect(redactSecrets('key hunter2Secret in /root/x/y\n', ['hunter2Secret'])).toBe(
      'key [redacted] in /root/x/y\n',
    )
  })

  it('removes credentials from URLs and paths on the host', () => {
    expect(sanitizeProviderMessage('connect to https://user:hunter2@proxy.internal:8080/x failed')).toBe(
      'connect to https://proxy.internal:8080/x failed',
    )
    const out = sanitizeProviderMessage(
      "ENOENT: no such file, open '/home/alice/.local/share/opencode/auth.json' (C:\\Users\\alice\\key.txt)",
    ) as string
    expect(out).not.toContain('alice')
    expect(out).toContain('[path]')
  })

  it('drops control characters, collapses white space and caps the length', () => {
    expect(sanitizeProviderMessage('a\u0000b\n\n  c\u001b[31m')).toBe('a b c [31m')
    const long = sanitizeProviderMessage('word '.repeat(500)) as string
    expect(long.length).toBeLessThanOrEqual(PROVIDER_MESSAGE_MAX)
    expect(long.endsWith('...')).toBe(true)
  })

  it('answers undefined for no message', () => {
    expect(sanitizeProviderMessage(undefined)).toBeUndefined()
    expect(sanitizeProviderMessage(42)).toBeUndefined()
    expect(sanitizeProviderMessage(' \n ')).toBeUndefined()
  })

  it('never passes on a key-shaped secret, wherever it sits in the message', () => {
    const secret = fc
      .tuple(fc.constantFrom('sk-', 'sk-ant-', 'sk-proj-', ''), fc.stringMatching(/^[A-Za-z0-9]{30,48}$/))
      .map(([prefix, body]) => `${prefix}${body.slice(0, 10)}7${body.slice(10)}`)
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        secret,
        fc.string({ maxLength: 40 }),
        (before, key, after) => {
          const out = sanitizeProviderMessage(`${before} ${key} ${after}`) ?? ''
          expect(out).not.toContain(key)
        },
      ),
    )
  })
})
