import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { testSecret } from '../test/helpers.ts'
import { createHandleCodec } from './create-handle-codec.ts'
import { parseHandle } from './handle-format.ts'

// The documented format, rebuilt independently with node:crypto: if the codec drifts from it
// (key derivation, AAD, layout), these tests fail.
const secret = testSecret()
const key = Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), 'sallyport/handles/v1 aes-256-gcm', 32))
const T0 = Date.UTC(2026, 0, 1)

function lengthPrefixed(parts: string[]): Buffer {
  return Buffer.concat(
    parts.map((text) => {
      const bytes = Buffer.from(text, 'utf8')
      const length = Buffer.alloc(4)
      length.writeUInt32BE(bytes.length)
      return Buffer.concat([length, bytes])
    }),
  )
}

const aad = (kind: string, identity: string) => lengthPrefixed(['sallyport/handle', 'v1', kind, identity])

function uint48(value: number): Buffer {
  const out = Buffer.alloc(6)
  out.writeUIntBE(value, 0, 6)
  return out
}

describe('handle format', () => {
  it('opens a handle built with node:crypto from the documented layout', async () => {
    const iv = randomBytes(12)
    const plaintext = Buffer.concat([uint48(T0), uint48(T0 + 1000), Buffer.from('{"s":"ses_1"}')])
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 })
    cipher.setAAD(aad('job', 'idn'))
    const body = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
    const codec = createHandleCodec({ secret, now: () => T0 + 999 })
    expect(await codec.open('job', 'idn', `v1.${body.toString('base64url')}`)).toEqual({ s: 'ses_1' })
  })

  it('seals handles node:crypto can open: iv, then ciphertext and a 16-byte tag', async () => {
    const codec = createHandleCodec({ secret, now: () => T0, lifetimesMs: { interaction: 5000 } })
    const handle = await codec.seal('interaction', 'idn', { q: 'que_1' })
    const body = Buffer.from(handle.slice(3), 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, 12), { authTagLength: 16 })
    decipher.setAAD(aad('interaction', 'idn'))
    decipher.setAuthTag(body.subarray(-16))
    const plaintext = Buffer.concat([decipher.update(body.subarray(12, -16)), decipher.final()])
    expect(plaintext.readUIntBE(0, 6)).toBe(T0)
    expect(plaintext.readUIntBE(6, 6)).toBe(T0 + 5000)
    expect(plaintext.subarray(12).toString('utf8')).toBe('{"q":"que_1"}')
  })
})

describe('parseHandle', () => {
  it('splits a handle into a 12-byte IV and the rest', () => {
    const body = Uint8Array.from({ length: 60 }, (_, i) => i)
    const parsed = parseHandle(`v1.${Buffer.from(body).toString('base64url')}`)
    expect(parsed).toEqual({ ok: true, value: { iv: body.subarray(0, 12), sealed: body.subarray(12) } })
  })

  it.each([
    ['not a string', 1, 'ERR_HANDLE_MALFORMED'],
    ['no version prefix', 'AAAAAAAA', 'ERR_HANDLE_MALFORMED'],
    ['a non-base64url character', 'v1.AAAA.AAAA', 'ERR_HANDLE_MALFORMED'],
    ['too long', `v1.${'A'.repeat(4100)}`, 'ERR_HANDLE_MALFORMED'],
    ['another version', `v7.${'A'.repeat(60)}`, 'ERR_HANDLE_INVALID'],
    ['an impossible base64 length', `v1.${'A'.repeat(61)}`, 'ERR_HANDLE_INVALID'],
    ['too few bytes for IV, header and tag', `v1.${'A'.repeat(55)}`, 'ERR_HANDLE_INVALID'],
  ])('answers %s with the right code', (_, value, code) => {
    expect(parseHandle(value)).toEqual({ ok: false, code })
  })
})
