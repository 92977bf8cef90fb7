import { describe, expect, it } from 'vitest'
import { isRetryableStatus, UpstreamError } from './errors.ts'

describe('UpstreamError', () => {
  it('carries code, operation, status, body and isRetryable', () => {
    const error = new UpstreamError('ERR_UPSTREAM_HTTP', 'upstream session.get failed: HTTP 503', {
      operation: 'session.get',
      status: 503,
      body: 'busy',
      isRetryable: true,
    })
    expect(error).toMatchObject({
      name: 'UpstreamError',
      code: 'ERR_UPSTREAM_HTTP',
      operation: 'session.get',
      status: 503,
      body: 'busy',
      isRetryable: true,
    })
  })

  it('isInstance recognises it, also from another copy of the class, and nothing else', () => {
    const error = new UpstreamError('ERR_UPSTREAM_TIMEOUT', 'x', { operation: 'a', isRetryable: true })
    expect(UpstreamError.isInstance(error)).toBe(true)
    const foreign = Object.assign(new Error('x'), {
      [Symbol.for('sallyport.upstream-client.UpstreamError')]: true,
    })
    expect(UpstreamError.isInstance(foreign)).toBe(true)
    expect(UpstreamError.isInstance(new Error('x'))).toBe(false)
    expect(UpstreamError.isInstance({ code: 'ERR_UPSTREAM_HTTP' })).toBe(false)
    expect(UpstreamError.isInstance(undefined)).toBe(false)
  })

  it.each([
    [408, true],
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
    [404, false],
    [409, false],
  ])('isRetryableStatus(%i) is %s', (status, expected) => {
    expect(isRetryableStatus(status)).toBe(expected)
  })
})
