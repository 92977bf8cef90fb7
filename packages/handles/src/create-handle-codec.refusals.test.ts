import { describe, expect, it } from 'vitest'
import { expectHandleError, handleBytes, handleFromBytes, jobPayload, testSecret } from '../test/helpers.ts'
import { createHandleCodec } from './create-handle-codec.ts'
import { parseHandle } from './handle-format.ts'
import { HANDLE_ERROR_MESSAGES, HandleError } from './index.ts'

const identity = 'idn_7f3a9c'

describe('refusals', () => {
  it.each([
    ['a number', 42],
    ['null', null],
    ['an empty string', ''],
    ['a raw upstream id', 'ses_0123456789abcdefghijklmnop'],
    ['the bare prefix', 'v1.'],
    ['a prefix without version digits', 'v.AAAA'],
    ['standard base64 characters', `v1.${'A'.repeat(60)}+/`],
    ['padding', `v1.${'A'.repeat(58)}==`],
    ['whitespace', ` v1.${'A'.repeat(60)}`],
    ['a string longer than 4096 characters', `v1.${'A'.repeat(4094)}`],
  ])('answers ERR_HANDLE_MALFORMED for %s', async (_, value) => {
    const codec = createHandleCodec({ secret: testSecret() })
    await expectHandleError(codec.open('job', identity, value as string), 'ERR_HANDLE_MALFORMED')
  })

  it('answers ERR_HANDLE_INVALID for another version, bad base64url and short input', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const handle = await codec.seal('job', identity, jobPayload())
    const body = handle.slice(3)
    for (const value of [
      `v2.${body}`,
      `v0.${body}`,
      `v1.${'A'.repeat(57)}`, // 4n + 1 characters: not a base64 length
      `v1.${'A'.repeat(54)}`, // 40 bytes: shorter than IV, header, `{}` and tag
    ]) {
      await expectHandleError(codec.open('job', identity, value), 'ERR_HANDLE_INVALID')
    }
  })

  it('rejects non-canonical base64url (unused trailing bits set) although it would decode', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const handle = await codec.seal('job', identity, jobPayload())
    expect(parseHandle(handle).ok).toBe(true)
    // Find a last character whose unused low bits are zero and set them: same bytes if decoded leniently.
    const rest = (handle.length - 3) % 4
    expect(rest).not.toBe(0)
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = alphabet.indexOf(handle.at(-1)!)
    const altered = `${handle.slice(0, -1)}${alphabet[last | 1]}`
    expect(altered).not.toBe(handle)
    expect(Buffer.from(altered.slice(3), 'base64url')).toEqual(handleBytes(handle))
    await expectHandleError(codec.open('job', identity, altered), 'ERR_HANDLE_INVALID')
  })

  it('gives every authentication failure the same code and message', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const other = createHandleCodec({ secret: testSecret(2) })
    const handle = await codec.seal('job', identity, jobPayload())
    const flipped = handleBytes(handle)
    flipped[20]! ^= 0x80
    // Each rejection is caught where it is made: awaited one by one, a later one could reject
    // before its turn and count as unhandled (seen on a loaded machine).
    const failures = [
      other.open('job', identity, handle),
      codec.open('session', identity, handle),
      codec.open('job', 'idn_other', handle),
      codec.open('job', identity, handleFromBytes(flipped)),
      codec.open('job', identity, handleFromBytes(handleBytes(handle).subarray(0, 50))),
    ].map((failure) => failure.catch((caught: unknown) => caught))
    const messages = new Set<string>()
    for (const failure of failures) {
      const error = await failure
      expect(error).toBeInstanceOf(HandleError)
      expect((error as HandleError).code).toBe('ERR_HANDLE_INVALID')
      expect((error as HandleError).cause).toBeUndefined()
      messages.add((error as HandleError).message)
      expect((error as HandleError).message).not.toContain(handle.slice(3, 12))
    }
    expect([...messages]).toEqual([HANDLE_ERROR_MESSAGES.ERR_HANDLE_INVALID])
  })

  it('refuses every truncation of the handle text', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const handle = await codec.seal('job', identity, jobPayload())
    for (let length = 0; length < handle.length; length++) {
      // Up to "v1." nothing handle-shaped is left; beyond it the text is a damaged handle.
      const code = length <= 3 ? 'ERR_HANDLE_MALFORMED' : 'ERR_HANDLE_INVALID'
      await expectHandleError(codec.open('job', identity, handle.slice(0, length)), code)
    }
  })

  it('refuses every single-character substitution in the handle body', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const handle = await codec.seal('job', identity, jobPayload())
    for (let i = 3; i < handle.length; i++) {
      const replacement = handle[i] === 'A' ? 'B' : 'A'
      const altered = handle.slice(0, i) + replacement + handle.slice(i + 1)
      await expectHandleError(codec.open('job', identity, altered), 'ERR_HANDLE_INVALID')
    }
  })
})

describe('IVs', () => {
  it('never repeats an IV over 100 000 seals', async () => {
    const codec = createHandleCodec({ secret: testSecret() })
    const seen = new Set<string>()
    const total = 100_000
    const batch = 1000
    for (let done = 0; done < total; done += batch) {
      const handles = await Promise.all(
        Array.from({ length: batch }, () => codec.seal('job', identity, { s: 'ses_x' })),
      )
      for (const handle of handles) {
        const parsed = parseHandle(handle)
        if (!parsed.ok) throw new Error('sealed handle did not parse')
        expect(parsed.value.iv.length).toBe(12)
        seen.add(Buffer.from(parsed.value.iv).toString('hex'))
      }
    }
    expect(seen.size).toBe(total)
  }, 120_000)
})
