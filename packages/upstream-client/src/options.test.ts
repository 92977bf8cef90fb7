import { describe, expect, it } from 'vitest'
import { resolveOptions, type UpstreamClientOptions } from './options.ts'

const base: UpstreamClientOptions = { baseUrl: 'http://127.0.0.1:3810', password: 'pw', directory: '/work' }

describe('resolveOptions', () => {
  it('fills defaults and strips the trailing slash of baseUrl', () => {
    const resolved = resolveOptions({ ...base, baseUrl: 'http://127.0.0.1:3810/' })
    expect(resolved).toMatchObject({
      baseUrl: 'http://127.0.0.1:3810',
      username: 'opencode',
      directory: '/work',
      timeoutMs: 10_000,
      maxConcurrentRequests: 32,
      events: { heartbeatTimeoutMs: 25_000, initialBackoffMs: 250, maxBackoffMs: 5_000 },
    })
  })

  it.each([
    ['a relative baseUrl', { baseUrl: '/x' }],
    ['a non-http baseUrl', { baseUrl: 'file:///etc' }],
    ['credentials in baseUrl', { baseUrl: 'http://u:p@host' }],
    ['a query in baseUrl', { baseUrl: 'http://host/?directory=/etc' }],
    ['an empty password', { password: '' }],
    ['a username with a colon', { username: 'a:b' }],
    ['a relative directory', { directory: 'work' }],
    ['a non-function fetch', { fetch: 'x' as unknown as typeof fetch }],
    ['a non-function fairnessKey', { fairnessKey: 'x' as unknown as () => string }],
  ])('throws TypeError for %s', (_what, patch) => {
    expect(() => resolveOptions({ ...base, ...patch })).toThrow(TypeError)
  })

  it.each([
    ['timeoutMs', { timeoutMs: 0 }],
    ['a negative heartbeat timeout', { events: { heartbeatTimeoutMs: -1 } }],
    ['an infinite backoff', { events: { maxBackoffMs: Number.POSITIVE_INFINITY } }],
    ['no concurrent request', { maxConcurrentRequests: 0 }],
    ['a fractional request bound', { maxConcurrentRequests: 1.5 }],
    ['a request bound over 1024', { maxConcurrentRequests: 1025 }],
  ])('throws RangeError for %s', (_what, patch) => {
    expect(() => resolveOptions({ ...base, ...patch })).toThrow(RangeError)
  })

  it('never puts the password into an error message', () => {
    try {
      resolveOptions({ ...base, password: 'hunter2', directory: 'relative' })
    } catch (error) {
      expect(String(error)).not.toContain('hunter2')
    }
  })
})
