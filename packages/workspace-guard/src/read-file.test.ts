import { describe, expect, it } from 'vitest'
import { GuardError } from './errors.ts'
import { containsPrivateKey, decodeText } from './read-file.ts'

const code = (bytes: Uint8Array): string | undefined => {
  try {
    decodeText(bytes)
    return undefined
  } catch (error) {
    return GuardError.isInstance(error) ? error.code : 'not a GuardError'
  }
}
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)
const BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n'

describe('decodeText', () => {
  it('decodes UTF-8 text and drops a leading BOM', () => {
    expect(decodeText(utf8('\ufeffhé llo\n'))).toBe('hé llo\n')
    expect(decodeText(new Uint8Array())).toBe('')
  })

  it('refuses a NUL byte as not text', () => {
    expect(code(utf8('abc\0def'))).toBe('ERR_GUARD_NOT_TEXT')
  })

  it('refuses invalid UTF-8 as not text', () => {
    expect(code(Uint8Array.of(0x61, 0xff, 0x62))).toBe('ERR_GUARD_NOT_TEXT')
    expect(code(Uint8Array.of(0xc0, 0xaf))).toBe('ERR_GUARD_NOT_TEXT') // overlong "/"
    expect(code(Uint8Array.of(0xed, 0xa0, 0x80))).toBe('ERR_GUARD_NOT_TEXT') // encoded surrogate
  })

  it('refuses UTF-16 text (it holds NUL bytes)', () => {
    expect(code(Uint8Array.of(0xff, 0xfe, 0x61, 0x00, 0x62, 0x00))).toBe('ERR_GUARD_NOT_TEXT')
  })

  it.each([
    'PRIVATE KEY',
    'RSA PRIVATE KEY',
    'EC PRIVATE KEY',
    'DSA PRIVATE KEY',
    'OPENSSH PRIVATE KEY',
    'ENCRYPTED PRIVATE KEY',
    'PGP PRIVATE KEY BLOCK',
  ])('denies content holding a -----BEGIN %s----- block', (label) => {
    const text = `notes\n-----BEGIN ${label}-----\n${BODY}-----END ${label}-----\n`
    expect(code(utf8(text))).toBe('ERR_GUARD_DENIED')
    expect(code(utf8(text.toLowerCase()))).toBe('ERR_GUARD_DENIED')
  })

  it('denies a PuTTY private key', () => {
    expect(code(utf8('PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n'))).toBe('ERR_GUARD_DENIED')
  })

  it('allows public keys and certificates', () => {
    expect(containsPrivateKey(`-----BEGIN PUBLIC KEY-----\n${BODY}-----END PUBLIC KEY-----\n`)).toBe(false)
    expect(containsPrivateKey(`-----BEGIN CERTIFICATE-----\n${BODY}-----END CERTIFICATE-----\n`)).toBe(false)
    expect(containsPrivateKey('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI user@host')).toBe(false)
  })
})
