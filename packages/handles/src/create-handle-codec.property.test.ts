import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { expectHandleError, handleBytes, handleFromBytes, testSecret } from '../test/helpers.ts'
import { HANDLE_KINDS, type HandleKind, MAX_LIFETIME_MS } from './codec-options.ts'
import { createHandleCodec } from './create-handle-codec.ts'

const kind = fc.constantFrom(...HANDLE_KINDS)
const identity = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
const payload = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 })
const secret = fc.uint8Array({ minLength: 32, maxLength: 64 })
const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const codec = createHandleCodec({ secret: testSecret() })

describe('handle codec properties', () => {
  it('round-trips any JSON object for any kind and identity', async () => {
    await fc.assert(
      fc.asyncProperty(kind, identity, payload, async (k, id, value) => {
        const handle = await codec.seal(k, id, value)
        expect(await codec.open(k, id, handle)).toEqual(json(value))
      }),
      { numRuns: 200 },
    )
  })

  it('rejects every single-bit flip of the decoded bytes', async () => {
    await fc.assert(
      fc.asyncProperty(kind, identity, payload, async (k, id, value) => {
        const bytes = handleBytes(await codec.seal(k, id, value))
        for (let bit = 0; bit < bytes.length * 8; bit++) {
          const flipped = Buffer.from(bytes)
          flipped[bit >> 3]! ^= 1 << (bit & 7)
          await expectHandleError(codec.open(k, id, handleFromBytes(flipped)), 'ERR_HANDLE_INVALID')
        }
      }),
      { numRuns: 8 },
    )
  })

  it('rejects every truncation of the decoded bytes', async () => {
    await fc.assert(
      fc.asyncProperty(kind, identity, payload, async (k, id, value) => {
        const bytes = handleBytes(await codec.seal(k, id, value))
        // Length 0 leaves "v1." alone, which is not handle-shaped at all.
        await expectHandleError(
          codec.open(k, id, handleFromBytes(bytes.subarray(0, 0))),
          'ERR_HANDLE_MALFORMED',
        )
        for (let length = 1; length < bytes.length; length++) {
          await expectHandleError(
            codec.open(k, id, handleFromBytes(bytes.subarray(0, length))),
            'ERR_HANDLE_INVALID',
          )
        }
      }),
      { numRuns: 8 },
    )
  })

  it('rejects a handle sealed with another secret', async () => {
    await fc.assert(
      fc.asyncProperty(secret, secret, kind, identity, async (a, b, k, id) => {
        fc.pre(Buffer.compare(a, b) !== 0)
        const handle = await createHandleCodec({ secret: a }).seal(k, id, { s: 'ses_1' })
        await expectHandleError(createHandleCodec({ secret: b }).open(k, id, handle), 'ERR_HANDLE_INVALID')
      }),
      { numRuns: 50 },
    )
  })

  it('rejects a handle opened for another identity', async () => {
    await fc.assert(
      fc.asyncProperty(kind, identity, identity, async (k, a, b) => {
        fc.pre(a !== b)
        const handle = await codec.seal(k, a, { s: 'ses_1' })
        await expectHandleError(codec.open(k, b, handle), 'ERR_HANDLE_INVALID')
      }),
      { numRuns: 200 },
    )
  })

  it('rejects a handle opened as another kind', async () => {
    await fc.assert(
      fc.asyncProperty(kind, kind, identity, async (a, b, id) => {
        fc.pre(a !== b)
        const handle = await codec.seal(a, id, { s: 'ses_1' })
        await expectHandleError(codec.open(b as HandleKind, id, handle), 'ERR_HANDLE_INVALID')
      }),
      { numRuns: 100 },
    )
  })

  it('rejects the same bytes under any other version prefix', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 999 }), async (version) => {
        fc.pre(version !== 1)
        const handle = await codec.seal('job', 'idn', { s: 'ses_1' })
        await expectHandleError(
          codec.open('job', 'idn', `v${version}.${handle.slice(3)}`),
          'ERR_HANDLE_INVALID',
        )
      }),
      { numRuns: 100 },
    )
  })

  it('expires exactly at issuedAt + ttl: valid at exp - 1, expired at exp (exclusive bound)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 ** 47 }),
        fc.integer({ min: 1, max: MAX_LIFETIME_MS }),
        kind,
        async (issuedAt, ttlMs, k) => {
          const state = { now: issuedAt }
          const timed = createHandleCodec({ secret: testSecret(), now: () => state.now })
          const handle = await timed.seal(k, 'idn', { s: 'ses_1' }, { ttlMs })
          expect(await timed.open(k, 'idn', handle)).toEqual({ s: 'ses_1' })
          state.now = issuedAt + ttlMs - 1
          expect(await timed.open(k, 'idn', handle)).toEqual({ s: 'ses_1' })
          state.now = issuedAt + ttlMs
          await expectHandleError(timed.open(k, 'idn', handle), 'ERR_HANDLE_EXPIRED')
          state.now = issuedAt + ttlMs + 1
          await expectHandleError(timed.open(k, 'idn', handle), 'ERR_HANDLE_EXPIRED')
        },
      ),
      { numRuns: 100 },
    )
  })
})
