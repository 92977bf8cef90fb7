import { createHmac, hkdfSync } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { testSecret } from '../test/helpers.ts'
import { createOwnershipSigner } from './create-ownership-signer.ts'

const session = 'ses_01J9Z8X7W6V5T4S3R2Q1P0N9M8'
const identity = 'idn_7f3a9c'
const id = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 })

describe('ownership signer', () => {
  it('verifies a record it signed for the same session and identity', async () => {
    const signer = createOwnershipSigner({ secret: testSecret() })
    const record = await signer.sign(session, identity)
    expect(record.v).toBe(1)
    expect(record.mac).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(await signer.verify(session, identity, record)).toBe(true)
    // As stored in upstream metadata and read back.
    expect(await signer.verify(session, identity, JSON.parse(JSON.stringify(record)))).toBe(true)
  })

  it('computes HMAC-SHA256 with an HKDF-derived key over the length-prefixed pair', async () => {
    const secret = testSecret()
    const key = Buffer.from(
      hkdfSync('sha256', secret, new Uint8Array(0), 'sallyport/ownership/v1 hmac-sha256', 32),
    )
    const part = (text: string) => {
      const bytes = Buffer.from(text, 'utf8')
      const length = Buffer.alloc(4)
      length.writeUInt32BE(bytes.length)
      return Buffer.concat([length, bytes])
    }
    const input = Buffer.concat(['sallyport/ownership', 'v1', session, identity].map(part))
    const expected = createHmac('sha256', key).update(input).digest('base64url')
    expect((await createOwnershipSigner({ secret }).sign(session, identity)).mac).toBe(expected)
  })

  it('fails a record copied onto another session', async () => {
    const signer = createOwnershipSigner({ secret: testSecret() })
    await fc.assert(
      fc.asyncProperty(id, id, id, async (a, b, who) => {
        fc.pre(a !== b)
        expect(await signer.verify(b, who, await signer.sign(a, who))).toBe(false)
      }),
      { numRuns: 100 },
    )
  })

  it('fails a record presented for another identity', async () => {
    const signer = createOwnershipSigner({ secret: testSecret() })
    await fc.assert(
      fc.asyncProperty(id, id, id, async (ses, a, b) => {
        fc.pre(a !== b)
        expect(await signer.verify(ses, b, await signer.sign(ses, a))).toBe(false)
      }),
      { numRuns: 100 },
    )
  })

  it('keeps the pair unambiguous: moving characters between session and identity fails', async () => {
    const signer = createOwnershipSigner({ secret: testSecret() })
    const record = await signer.sign('ses_ab', 'c')
    expect(await signer.verify('ses_a', 'bc', record)).toBe(false)
  })

  it('fails a record signed with another secret', async () => {
    const record = await createOwnershipSigner({ secret: testSecret(1) }).sign(session, identity)
    expect(await createOwnershipSigner({ secret: testSecret(2) }).verify(session, identity, record)).toBe(
      false,
    )
  })

  it('fails a record with any one MAC character changed', async () => {
    const signer = createOwnershipSigner({ secret: testSecret() })
    const record = await signer.sign(session, identity)
    for (let i = 0; i < record.mac.length; i++) {
      const mac = record.mac.slice(0, i) + (record.mac[i] === 'A' ? 'B' : 'A') + record.mac.slice(i + 1)
      expect(await signer.verify(session, identity, { v: 1, mac })).toBe(false)
    }
  })

  it('returns false, never throws, for garbage records and inputs', async () => {
    const signer = createOwnershipSigner({ secret: testSecret() })
    const { mac } = await signer.sign(session, identity)
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('boom')
        },
      },
    )
    const garbage: unknown[] = [
      undefined,
      null,
      0,
      'v1',
      mac,
      [],
      [1, mac],
      {},
      { v: 1 },
      { mac },
      { v: 2, mac },
      { v: '1', mac },
      { v: 1, mac: `${mac}=` },
      { v: 1, mac: mac.slice(0, 42) },
      { v: 1, mac: `${mac}A` },
      { v: 1, mac: `${mac.slice(0, 42)}+` },
      { v: 1, mac, extra: true },
      { v: 1, mac: 42 },
      hostile,
    ]
    for (const record of garbage) expect(await signer.verify(session, identity, record)).toBe(false)
    await fc.assert(
      fc.asyncProperty(fc.anything(), async (record) => {
        expect(await signer.verify(session, identity, record)).toBe(false)
      }),
    )
    const record = await signer.sign(session, identity)
    for (const bad of ['', 'a\uDC00', 42, null, 'x'.repeat(1025)]) {
      expect(await signer.verify(bad as string, identity, record)).toBe(false)
      expect(await signer.verify(session, bad as string, record)).toBe(false)
    }
  })

  it('returns false, never throws, when the key derivation failed', async () => {
    const record = await createOwnershipSigner({ secret: testSecret() }).sign(session, identity)
    // A runtime whose HKDF derivation fails (e.g. an unsupported algorithm): the cached key rejects.
    const deriveKey = vi
      .spyOn(globalThis.crypto.subtle, 'deriveKey')
      .mockRejectedValue(new DOMException('not supported', 'NotSupportedError'))
    try {
      const signer = createOwnershipSigner({ secret: testSecret() })
      await expect(signer.verify(session, identity, record)).resolves.toBe(false)
      expect(deriveKey).toHaveBeenCalled()
      await expect(signer.sign(session, identity)).rejects.toThrow('not supported')
    } finally {
      deriveKey.mockRestore()
    }
  })

  it('rejects bad sign input and bad options', async () => {
    const signer = createOwnershipSigner({ secret: testSecret() })
    await expect(signer.sign('', identity)).rejects.toThrow(TypeError)
    await expect(signer.sign(session, 'a\uD800')).rejects.toThrow(TypeError)
    expect(() => createOwnershipSigner({ secret: new Uint8Array(31) })).toThrow(RangeError)
    expect(() => createOwnershipSigner({ secret: 'x'.repeat(64) } as never)).toThrow(TypeError)
    expect(() => createOwnershipSigner(null as never)).toThrow(TypeError)
  })

  it('copies the secret: zeroing the caller buffer afterwards changes nothing', async () => {
    const bytes = Buffer.from(testSecret())
    const signer = createOwnershipSigner({ secret: bytes })
    bytes.fill(0)
    const record = await signer.sign(session, identity)
    expect(await createOwnershipSigner({ secret: testSecret() }).verify(session, identity, record)).toBe(true)
  })
})
