import { ProtocolError, ResourceNotFoundError } from '@modelcontextprotocol/server'
import { HandleError } from '@sallyport/handles'
import { UpstreamError, type UpstreamErrorCode } from '@sallyport/upstream-client'
import { GuardError } from '@sallyport/workspace-guard'
import { describe, expect, it } from 'vitest'
import {
  httpRefusal,
  isTransientUpstream,
  rateLimitedResponse,
  resourceError,
  toGatewayError,
} from './error-mapping.js'
import { GatewayError, type GatewayErrorCode } from './errors.js'

const upstream = (code: UpstreamErrorCode, isRetryable = false) =>
  new UpstreamError(code, `upstream failed for ses_${'a'.repeat(26)}`, {
    operation: 'session.get',
    isRetryable,
  })

describe('toGatewayError', () => {
  it.each([
    [new HandleError('ERR_HANDLE_MALFORMED'), 'handle_invalid'],
    [new HandleError('ERR_HANDLE_INVALID'), 'not_found'],
    [new HandleError('ERR_HANDLE_EXPIRED'), 'handle_expired'],
    [new GuardError('ERR_GUARD_DENIED'), 'path_denied'],
    [new GuardError('ERR_GUARD_NOT_FOUND'), 'not_found'],
    [new GuardError('ERR_GUARD_TOO_LARGE'), 'too_large'],
    [new GuardError('ERR_GUARD_NOT_TEXT'), 'not_text'],
    [new GuardError('ERR_GUARD_INVALID'), 'invalid_input'],
    [upstream('ERR_UPSTREAM_NOT_FOUND'), 'not_found'],
    [upstream('ERR_UPSTREAM_HTTP'), 'upstream_unavailable'],
    [upstream('ERR_UPSTREAM_TIMEOUT'), 'upstream_unavailable'],
    [upstream('ERR_UPSTREAM_NETWORK'), 'upstream_unavailable'],
    [upstream('ERR_UPSTREAM_SCHEMA'), 'upstream_unavailable'],
  ])('maps %s to %s with a fixed message (no upstream id)', (error, code) => {
    const mapped = toGatewayError(error)
    expect(mapped.code).toBe(code)
    expect(mapped.cause).toBe(error)
    expect(mapped.message).not.toContain('ses_')
  })

  it('names the read limit in the too_large message', () => {
    expect(toGatewayError(new GuardError('ERR_GUARD_TOO_LARGE')).message).toBe(
      'The file is larger than the 256 KiB read limit.',
    )
  })

  it('keeps a GatewayError, also one of another copy of the package (its Symbol.for marker)', () => {
    const own = new GatewayError('busy', 'Busy.')
    expect(toGatewayError(own)).toBe(own)
    const foreign = Object.assign(new Error('Busy.'), {
      code: 'busy',
      [Symbol.for('sallyport.gateway-server.GatewayError')]: true,
    })
    expect(GatewayError.isInstance(foreign)).toBe(true)
    expect(toGatewayError(foreign)).toBe(foreign)
  })

  it('makes anything else internal, a look-alike with a name and a code too', () => {
    expect(
      GatewayError.isInstance(Object.assign(new Error('x'), { name: 'GatewayError', code: 'busy' })),
    ).toBe(false)
    const lookAlike = Object.assign(new Error('x'), { code: 'ERR_HANDLE_EXPIRED' })
    expect(toGatewayError(lookAlike).code).toBe('internal')
    expect(toGatewayError('a string').code).toBe('internal')
  })
})

describe('isTransientUpstream', () => {
  it('is true only for a retryable upstream failure', () => {
    expect(isTransientUpstream(upstream('ERR_UPSTREAM_TIMEOUT', true))).toBe(true)
    expect(isTransientUpstream(upstream('ERR_UPSTREAM_NOT_FOUND', false))).toBe(false)
    expect(
      isTransientUpstream(Object.assign(new Error('x'), { code: 'ERR_UPSTREAM_TIMEOUT', isRetryable: true })),
    ).toBe(false)
  })
})

describe('resourceError', () => {
  const uri = new URL('gateway://jobs/v1.abc')
  it.each(['not_found', 'handle_invalid', 'handle_expired'] as const)(
    '%s reads as an unknown resource',
    (code) => {
      expect(resourceError(new GatewayError(code, 'Not found.'), uri)).toBeInstanceOf(ResourceNotFoundError)
    },
  )

  it.each(['invalid_input', 'path_denied', 'too_large', 'upstream_unavailable', 'internal'] as const)(
    '%s is invalid params carrying the stable code',
    (code: GatewayErrorCode) => {
      const error = resourceError(new GatewayError(code, 'Refused.'), uri)
      expect(error).toBeInstanceOf(ProtocolError)
      expect(error).toMatchObject({ code: -32602, data: { code } })
    },
  )
})

describe('HTTP refusals', () => {
  const body = async (response: Response) => ({ status: response.status, body: await response.json() })

  it.each([
    [httpRefusal.originDenied(), 403, -32000, 'Origin not allowed'],
    [httpRefusal.credentialsUnavailable(), 503, -32603, 'Service unavailable'],
    [httpRefusal.unauthorized('Bearer realm="sallyport"', 'missing'), 401, -32001, 'Unauthorized'],
    [httpRefusal.methodNotAllowed('GET'), 405, -32000, 'Method not allowed'],
    [httpRefusal.body('too_large', 1024), 413, -32600, 'Request body larger than 1024 bytes'],
    [httpRefusal.body('timeout', 1024), 408, -32600, 'Request body not received in time'],
    [httpRefusal.body('busy', 1024), 503, -32603, 'Too many requests in progress'],
    [httpRefusal.body('aborted', 1024), 400, -32600, 'Request body incomplete'],
    [httpRefusal.parseError(), 400, -32700, 'Parse error: the body is not JSON'],
    [
      httpRefusal.tooComplex(32, 10_000),
      400,
      -32600,
      'Request too complex: at most 32 levels of nesting and 10000 values per request',
    ],
    [httpRefusal.batchTooLarge(3), 400, -32600, 'Batch too large: at most 3 messages per request'],
    [httpRefusal.internal(), 500, -32603, 'Internal error'],
  ])('answers %#: %i with one JSON-RPC error', async (response, status, code, message) => {
    expect(await body(response)).toEqual({
      status,
      body: { jsonrpc: '2.0', id: null, error: { code, message } },
    })
    expect(response.headers.get('cache-control')).toBe('no-store')
  })

  it.each([
    ['missing', 'Bearer realm="sallyport"'],
    ['malformed', 'Bearer realm="sallyport", error="invalid_request"'],
    ['jwt_invalid', 'Bearer realm="sallyport", error="invalid_token"'],
    ['ERR_CREDENTIALS_NOT_FOUND', 'Bearer realm="sallyport", error="invalid_token"'],
  ])('challenges a %s credential with %s', (reason, header) => {
    expect(httpRefusal.unauthorized('Bearer realm="sallyport"', reason).headers.get('www-authenticate')).toBe(
      header,
    )
  })

  it('answers a rate-limited batch with one error per request id and a hint of at least the minimum', async () => {
    const response = rateLimitedResponse([1, 'b'], 10, true, 100)
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('1')
    const answers = (await response.json()) as Array<{ id: unknown; error: { data: unknown } }>
    expect(answers.map((a) => a.id)).toEqual([1, 'b'])
    // Never below the second Retry-After can express, so the two never disagree.
    expect(answers[0]?.error.data).toEqual({ code: 'rate_limited', retryAfterMs: 1000 })
    const slow = (await rateLimitedResponse([1], 10, false, 2_500).json()) as { error: { data: unknown } }
    expect(slow.error.data).toEqual({ code: 'rate_limited', retryAfterMs: 2_500 })
  })
})
