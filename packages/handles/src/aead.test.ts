import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { expectHandleError, handleBytes, handleFromBytes, testSecret } from '../test/helpers.ts'
import { HANDLE_KINDS } from './codec-options.ts'
import { createHandleCodec } from './create-handle-codec.ts'

// The two crypto backends of the codec: node:crypto (`auto` in Node) and Web Crypto. They derive
// the same key, so each opens what the other sealed, and each refuses what the other refuses.

const kind = fc.constantFrom(...HANDLE_KINDS)
const identity = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
const payload = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 })
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const node = createHandleCodec({ secret: testSecret(), backend: 'auto' })
const web = createHandleCodec({ secret: testSecret(), backend: 'web-crypto' })

afterEach(() => {
  vi.restoreAllMocks()
})

describe('crypto backends', () => {
  it('open what the other sealed, for any kind, identity and payload', async () => {
    await fc.assert(
      fc.asyncProperty(kind, identity, payload, async (k, id, value) => {
        expect(await web.open(k, id, await node.seal(k, id, value))).toEqual(json(value))
        expect(await node.open(k, id, await web.seal(k, id, value))).toEqual(json(value))
      }),
      { numRuns: 150 },
    )
  })

  it('both refuse a flipped bit, another identity or another kind of what the other sealed', async () => {
    for (const [sealer, opener] of [
      [node, web],
      [web, node],
    ] as const) {
      const handle = await sealer.seal('job', 'idn-1', { s: 'ses_1', m: 'msg_1' })
      const bytes = handleBytes(handle)
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1
      await expectHandleError(opener.open('job', 'idn-1', handleFromBytes(bytes)), 'ERR_HANDLE_INVALID')
      await expectHandleError(opener.open('job', 'idn-2', handle), 'ERR_HANDLE_INVALID')
      await expectHandleError(opener.open('session', 'idn-1', handle), 'ERR_HANDLE_INVALID')
    }
  })

  it('in Node, `auto` does not go through Web Crypto at all; `web-crypto` does', async () => {
    const auto = createHandleCodec({ secret: testSecret(2) })
    const webOnly = createHandleCodec({ secret: testSecret(2), backend: 'web-crypto' })
    const handle = await webOnly.seal('session', 'idn', { s: 'ses_1' })
    const failing = () => Promise.reject(new Error('Web Crypto used'))
    vi.spyOn(globalThis.crypto.subtle, 'encrypt').mockImplementation(failing)
    vi.spyOn(globalThis.crypto.subtle, 'decrypt').mockImplementation(failing)
    expect(await auto.open('session', 'idn', await auto.seal('session', 'idn', { s: 'ses_2' }))).toEqual({
      s: 'ses_2',
    })
    expect(await auto.open('session', 'idn', handle)).toEqual({ s: 'ses_1' })
    await expect(webOnly.seal('session', 'idn', { s: 'ses_3' })).rejects.toThrow('Web Crypto used')
  })

  it('refuses an unknown backend at creation', () => {
    expect(() => createHandleCodec({ secret: testSecret(), backend: 'openssl' as never })).toThrow(TypeError)
  })
})
