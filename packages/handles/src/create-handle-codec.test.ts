import { describe, expect, it } from 'vitest'
import { expectHandleError, handleBytes, handleFromBytes, jobPayload, testSecret } from '../test/helpers.ts'
import { createHandleCodec } from './create-handle-codec.ts'
import { DEFAULT_LIFETIMES_MS, HANDLE_KINDS, MAX_CLOCK_SKEW_MS, MAX_HANDLE_LENGTH } from './index.ts'

const identity = 'idn_7f3a9c'
const T0 = Date.UTC(2026, 0, 1)

function clock(start = T0) {
  const state = { now: start }
  return { state, now: () => state.now }
}

describe('createHandleCodec options', () => {
  it('rejects a secret shorter than 32 bytes with a RangeError', () => {
    expect(() => createHandleCodec({ secret: new Uint8Array(31) })).toThrow(RangeError)
    expect(() => createHandleCodec({ secret: new Uint8Array(0) })).toThrow(RangeError)
  })

  it('rejects a secret that is not a Uint8Array with a TypeError', () => {
    for (const secret of [
      'x'.repeat(64),
      Array.from({ length: 32 }, () => 1),
      new ArrayBuffer(32),
      undefined,
    ]) {
      expect(() => createHandleCodec({ secret } as never)).toThrow(TypeError)
    }
    expect(() => createHandleCodec(undefined as never)).toThrow(TypeError)
  })

  it.each([
    [0, RangeError],
    [-1, RangeError],
    [1.5, RangeError],
    [Number.POSITIVE_INFINITY, RangeError],
    [Number.NaN, RangeError],
    [2 ** 40 + 1, RangeError],
    ['3600000', TypeError],
  ] as const)('rejects lifetime %s at creation', (value, type) => {
    expect(() => createHandleCodec({ secret: testSecret(), lifetimesMs: { job: value as number } })).toThrow(
      type,
    )
  })

  it('rejects an unknown kind in lifetimesMs and a non-function clock', () => {
    expect(() => createHandleCodec({ secret: testSecret(), lifetimesMs: { jobs: 1000 } as never })).toThrow(
      TypeError,
    )
    expect(() => createHandleCodec({ secret: testSecret(), now: 5 as never })).toThrow(TypeError)
  })

  it('never echoes a rejected value in the error message', () => {
    const error = (() => {
      try {
        createHandleCodec({ secret: testSecret(), lifetimesMs: { job: -987654 } })
      } catch (caught) {
        return caught as Error
      }
    })()
    expect(error?.message).not.toContain('987654')
  })

  it('copies the secret: zeroing the caller buffer afterwards changes nothing', async () => {
    const bytes = Buffer.from(testSecret())
    const codec = createHandleCodec({ secret: bytes })
    const handle = await codec.seal('job', identity, jobPayload())
    bytes.fill(0)
    expect(await codec.open('job', identity, handle)).toEqual(jobPayload())
    expect(await createHandleCodec({ secret: testSecret() }).open('job', identity, handle)).toEqual(
      jobPayload(),
    )
  })
})

describe('seal and open', () => {
  it('round-trips a payload for every kind', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    for (const kind of HANDLE_KINDS) {
      const payload = { kind, nested: { list: [1, 'two', null, true] }, unicode: 'héllo 🌍' }
      const handle = await codec.seal(kind, identity, payload)
      expect(handle.startsWith('v1.')).toBe(true)
      expect(await codec.open(kind, identity, handle)).toEqual(payload)
    }
  })

  it('keeps a typical job handle under 200 characters', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const handle = await codec.seal('job', '0f8e2d7c-4b1a-4e2f-9c3d-5a6b7c8d9e0f', {
      s: `ses_${'a'.repeat(26)}`,
      m: `msg_${'b'.repeat(26)}`,
    })
    expect(handle.length).toBeLessThan(200)
  })

  it('hides the payload: no upstream id appears in the handle or its bytes', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const handle = await codec.seal('job', identity, jobPayload())
    const text = handle + handleBytes(handle).toString('latin1')
    expect(text).not.toContain('ses_')
    expect(text).not.toContain('msg_')
    expect(text).not.toContain(identity)
  })

  it('seals the same payload to a different handle each time', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const a = await codec.seal('job', identity, jobPayload())
    const b = await codec.seal('job', identity, jobPayload())
    expect(a).not.toBe(b)
  })

  it('rejects bad seal input with TypeError or RangeError', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    await expect(codec.seal('jobs' as never, identity, {})).rejects.toThrow(TypeError)
    await expect(codec.seal('job', '', {})).rejects.toThrow(TypeError)
    await expect(codec.seal('job', 'a\uD800b', {})).rejects.toThrow(TypeError)
    await expect(codec.seal('job', 'x'.repeat(1025), {})).rejects.toThrow(TypeError)
    await expect(codec.seal('job', identity, [] as never)).rejects.toThrow(TypeError)
    await expect(codec.seal('job', identity, new Date() as never)).rejects.toThrow(TypeError)
    await expect(codec.seal('job', identity, { n: 10n })).rejects.toThrow(TypeError)
    await expect(codec.seal('job', identity, {}, { ttlMs: 0 })).rejects.toThrow(RangeError)
    await expect(codec.seal('job', identity, { big: 'x'.repeat(4000) })).rejects.toThrow(RangeError)
  })

  it('seals the largest payload that fits and opens it', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    // 4096 - 3 prefix chars leaves 4093 base64url chars, of which 4092 are usable (4n + 1 is not
    // a base64 length): 3069 bytes = IV 12 + header 12 + tag 16 + 3029 bytes of JSON.
    const payload = { x: 'y'.repeat(3029 - '{"x":""}'.length) }
    const handle = await codec.seal('session', identity, payload)
    expect(handle.length).toBe(MAX_HANDLE_LENGTH - 1)
    expect(await codec.open('session', identity, handle)).toEqual(payload)
    await expect(codec.seal('session', identity, { x: `${payload.x}y` })).rejects.toThrow(RangeError)
  })

  it('rejects an unknown kind or a bad identity on open with a TypeError', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const handle = await codec.seal('job', identity, jobPayload())
    await expect(codec.open('task' as never, identity, handle)).rejects.toThrow(TypeError)
    await expect(codec.open('job', '', handle)).rejects.toThrow(TypeError)
  })
})

describe('lifetimes', () => {
  it.each(HANDLE_KINDS.map((kind) => [kind, DEFAULT_LIFETIMES_MS[kind]] as const))(
    'a %s handle lives exactly its default lifetime (%i ms)',
    async (kind, lifetime) => {
      const { state, now } = clock()
      const codec = createHandleCodec({ secret: testSecret(), now })
      const handle = await codec.seal(kind, identity, { k: kind })
      state.now = T0 + lifetime - 1
      expect(await codec.open(kind, identity, handle)).toEqual({ k: kind })
      state.now = T0 + lifetime
      await expectHandleError(codec.open(kind, identity, handle), 'ERR_HANDLE_EXPIRED')
    },
  )

  it('uses the spec defaults: session 30 days, job 24 h, interaction 1 h, message 30 days; request state 15 min', () => {
    expect(DEFAULT_LIFETIMES_MS).toEqual({
      session: 2_592_000_000,
      job: 86_400_000,
      interaction: 3_600_000,
      message: 2_592_000_000,
      request_state: 900_000,
    })
  })

  it('honours configured lifetimes and a per-call ttlMs', async () => {
    const { state, now } = clock()
    const codec = createHandleCodec({ secret: testSecret(), now, lifetimesMs: { job: 5000 } })
    const configured = await codec.seal('job', identity, {})
    const perCall = await codec.seal('job', identity, {}, { ttlMs: 100 })
    const untouched = await codec.seal('interaction', identity, {})
    state.now = T0 + 100
    await expectHandleError(codec.open('job', identity, perCall), 'ERR_HANDLE_EXPIRED')
    expect(await codec.open('job', identity, configured)).toEqual({})
    state.now = T0 + 5000
    await expectHandleError(codec.open('job', identity, configured), 'ERR_HANDLE_EXPIRED')
    expect(await codec.open('interaction', identity, untouched)).toEqual({})
  })

  it(`accepts a handle issued up to ${MAX_CLOCK_SKEW_MS} ms in the future and refuses one beyond`, async () => {
    const { state, now } = clock()
    const codec = createHandleCodec({ secret: testSecret(), now })
    const handle = await codec.seal('job', identity, {})
    state.now = T0 - MAX_CLOCK_SKEW_MS
    expect(await codec.open('job', identity, handle)).toEqual({})
    state.now = T0 - MAX_CLOCK_SKEW_MS - 1
    await expectHandleError(codec.open('job', identity, handle), 'ERR_HANDLE_INVALID')
  })

  it('only says "expired" for an authentic handle: a tampered expired handle is invalid', async () => {
    const { state, now } = clock()
    const codec = createHandleCodec({ secret: testSecret(), now })
    const handle = await codec.seal('job', identity, {}, { ttlMs: 10 })
    state.now = T0 + 1000
    const bytes = handleBytes(handle)
    bytes[bytes.length - 1]! ^= 1
    await expectHandleError(codec.open('job', identity, handleFromBytes(bytes)), 'ERR_HANDLE_INVALID')
    await expectHandleError(codec.open('job', 'idn_other', handle), 'ERR_HANDLE_INVALID')
  })

  it('refuses a clock that returns nonsense', async () => {
    const codec = createHandleCodec({ secret: testSecret(), now: () => Number.NaN })
    await expect(codec.seal('job', identity, {})).rejects.toThrow(RangeError)
  })
})
