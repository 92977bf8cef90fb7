import { describe, expect, it } from 'vitest'
import { MAX_ERROR_BODY_LENGTH } from './errors.ts'
import { createRedactor, excerpt, sanitizeCause } from './redact.ts'

const username = 'gw'
const password = 's3cret/pw'
const token = Buffer.from(`${username}:${password}`).toString('base64')
const redact = createRedactor(username, password, token)

describe('createRedactor', () => {
  it.each([
    ['the base64 token', `token ${token} end`],
    ['the Authorization header value', `authorization: Basic ${token}`],
    ['the user:password pair', `url http://${username}:${password}@host`],
    ['the raw password', `password=${password}`],
    ['the URL-encoded password', `p=${encodeURIComponent(password)}`],
  ])('removes %s', (_what, text) => {
    const clean = redact(text)
    expect(clean).not.toContain(password)
    expect(clean).not.toContain(token)
    expect(clean).not.toContain(encodeURIComponent(password))
    expect(clean).toContain('[REDACTED]')
  })

  it('removes any Basic token, not only this client’s', () => {
    expect(redact('Authorization: Basic b3RoZXI6Y3JlZA==')).toBe('Authorization: Basic [REDACTED]')
  })
})

describe('excerpt', () => {
  it('stringifies objects and truncates after redaction', () => {
    const long = { message: `${password} ${'x'.repeat(2_000)}` }
    const text = excerpt(long, redact) ?? ''
    expect(text.startsWith('{"message":"[REDACTED] x')).toBe(true)
    expect(text.length).toBe(MAX_ERROR_BODY_LENGTH + 1)
    expect(text.endsWith('…')).toBe(true)
  })

  it('returns undefined for empty bodies', () => {
    expect(excerpt('', redact)).toBeUndefined()
    expect(excerpt(undefined, redact)).toBeUndefined()
  })
})

describe('sanitizeCause', () => {
  it('copies name, message and code only, flattening a nested cause', () => {
    const inner = Object.assign(new Error(`connect ECONNREFUSED ${password}`), { code: 'ECONNREFUSED' })
    const outer = Object.assign(new TypeError('fetch failed', { cause: inner }), {
      request: new Request('http://x', { headers: { authorization: `Basic ${token}` } }),
    })
    const copy = sanitizeCause(outer, redact)
    expect(copy.name).toBe('TypeError')
    expect(copy.message).toBe('fetch failed: connect ECONNREFUSED [REDACTED]')
    expect((copy as { code?: string }).code).toBe('ECONNREFUSED')
    expect(copy.cause).toBeUndefined()
    expect(JSON.stringify(Object.entries(copy))).not.toContain(token)
    expect('request' in copy).toBe(false)
  })
})
