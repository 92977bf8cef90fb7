import { ProtocolError, ResourceNotFoundError } from '@modelcontextprotocol/server'
import { HandleError, type HandleErrorCode } from '@sallyport/handles'
import { UpstreamError, type UpstreamErrorCode } from '@sallyport/upstream-client'
import { DEFAULT_MAX_BYTES, GuardError, type GuardErrorCode } from '@sallyport/workspace-guard'
import { GatewayError, type GatewayErrorCode } from './errors.js'

// The one place where errors become what a client sees: library error codes become the
// gateway's stable tool error codes, those become MCP resource errors, and refusals of the HTTP
// boundary become JSON-RPC error bodies with their HTTP status. Messages are fixed strings:
// nothing from the original error (which may hold an upstream id, a handle or an absolute path)
// is copied into what the client sees.

/** Every code the libraries the gateway calls can throw with. */
export type LibraryErrorCode = HandleErrorCode | GuardErrorCode | UpstreamErrorCode

// Exhaustive: a library that adds a code fails to compile here until the code is mapped.
const BY_LIBRARY_CODE: Readonly<Record<LibraryErrorCode, readonly [GatewayErrorCode, string]>> = {
  // A raw upstream id or any string that is not a gateway handle at all.
  ERR_HANDLE_MALFORMED: ['handle_invalid', 'That is not a valid handle.'],
  // Tampered, sealed by another key, bound to another credential or another kind: the caller
  // learns nothing about whether the object exists.
  ERR_HANDLE_INVALID: ['not_found', 'Not found.'],
  ERR_HANDLE_EXPIRED: ['handle_expired', 'That handle has expired; list your sessions to get a fresh one.'],
  ERR_GUARD_DENIED: ['path_denied', 'That path is not readable through the gateway.'],
  ERR_GUARD_NOT_FOUND: ['not_found', 'Not found.'],
  ERR_GUARD_TOO_LARGE: [
    'too_large',
    `The file is larger than the ${DEFAULT_MAX_BYTES / 1024} KiB read limit.`,
  ],
  ERR_GUARD_NOT_TEXT: ['not_text', 'The file is not UTF-8 text.'],
  ERR_GUARD_INVALID: ['invalid_input', 'The path or query is not valid.'],
  ERR_UPSTREAM_NOT_FOUND: ['not_found', 'Not found.'],
  ERR_UPSTREAM_HTTP: ['upstream_unavailable', 'The agent runtime could not complete the request.'],
  ERR_UPSTREAM_TIMEOUT: ['upstream_unavailable', 'The agent runtime did not answer in time.'],
  ERR_UPSTREAM_NETWORK: ['upstream_unavailable', 'The agent runtime is not reachable.'],
  ERR_UPSTREAM_SCHEMA: ['upstream_unavailable', 'The agent runtime returned an unexpected response.'],
}

/**
 * A failure of the runtime that a later try may not meet: no answer in time, no connection, or an
 * HTTP status worth retrying (the upstream client marks these `isRetryable`). Waits keep going
 * through such failures until their deadline.
 */
export function isTransientUpstream(error: unknown): boolean {
  return UpstreamError.isInstance(error) && error.isRetryable
}

/** Converts anything a tool threw into a `GatewayError` with a stable code and a safe message. */
export function toGatewayError(error: unknown): GatewayError {
  if (GatewayError.isInstance(error)) return error
  if (HandleError.isInstance(error) || GuardError.isInstance(error) || UpstreamError.isInstance(error)) {
    // A copy of a library newer than this gateway may carry a code it does not know yet.
    const mapped = Object.hasOwn(BY_LIBRARY_CODE, error.code) ? BY_LIBRARY_CODE[error.code] : undefined
    if (mapped) return new GatewayError(mapped[0], mapped[1], { cause: error })
  }
  return new GatewayError('internal', 'The gateway failed to complete the request.', { cause: error })
}

/**
 * The MCP tool result for a failure: `isError: true` with the JSON body `{ error: { code, message } }`
 * as its text content. No `structuredContent`: it would have to match the tool's output schema,
 * and 2025-era clients validate it even on errors.
 */
export function errorResult(
  error: GatewayError,
  retryAfterMs?: number,
): {
  isError: true
  content: [{ type: 'text'; text: string }]
} {
  const body = {
    error: {
      code: error.code,
      message: error.message,
      ...error.details,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    },
  }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
}

// ---- resources ----

const INVALID_PARAMS = -32602

// Exhaustive: how a resource read reports each gateway code. A handle that does not open (for
// any reason) and an object that is gone read as an unknown resource, like a foreign one.
const RESOURCE_ANSWER: Readonly<Record<GatewayErrorCode, 'not_found' | 'invalid_params'>> = {
  not_found: 'not_found',
  handle_invalid: 'not_found',
  handle_expired: 'not_found',
  invalid_input: 'invalid_params',
  forbidden: 'invalid_params',
  blocked_by_moderation: 'invalid_params',
  moderator_unavailable: 'invalid_params',
  not_pending: 'invalid_params',
  busy: 'invalid_params',
  upstream_unavailable: 'invalid_params',
  path_denied: 'invalid_params',
  too_large: 'invalid_params',
  not_text: 'invalid_params',
  rate_limited: 'invalid_params',
  internal: 'invalid_params',
}

/**
 * The MCP error a failed resource read throws: `ResourceNotFoundError` for anything that reads as
 * absent, otherwise an invalid-params `ProtocolError` whose data carries the stable code (and, when
 * rate limited, the retry hint).
 */
export function resourceError(error: GatewayError, uri: URL, retryAfterMs?: number): Error {
  return RESOURCE_ANSWER[error.code] === 'not_found'
    ? new ResourceNotFoundError(uri.href, error.message)
    : new ProtocolError(INVALID_PARAMS, error.message, {
        code: error.code,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      })
}

// ---- the HTTP boundary ----

/** A JSON response that is never cached. */
export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): Response {
  const h = new Headers(headers)
  h.set('Content-Type', 'application/json')
  h.set('Cache-Control', 'no-store')
  return new Response(JSON.stringify(body), { status, headers: h })
}

const rpcError = (status: number, code: number, message: string, headers?: Record<string, string>) =>
  jsonResponse(status, { jsonrpc: '2.0', id: null, error: { code, message } }, headers)

/** Why a request body could not be read; each has its own HTTP answer. */
export type BodyFailure = 'too_large' | 'timeout' | 'busy' | 'busy_credential' | 'aborted'

/**
 * The JSON-RPC error answers of the HTTP boundary, each with its status. One body per cause
 * class: a 401 never says whether a key exists, a 403 never names the origin.
 */
export const httpRefusal = {
  methodNotAllowed: (allow: string): Response =>
    rpcError(405, -32000, 'Method not allowed', { Allow: allow }),
  /** A foreign `Origin`, refused before any credential is looked at. */
  originDenied: (): Response => rpcError(403, -32000, 'Origin not allowed'),
  /**
   * No usable credential (`reason` as `authenticate` gives it; one body for every cause). RFC 6750 §3: no error code when none was presented; `invalid_token` for
   * one that was presented and failed; `invalid_request` for a malformed Authorization header.
   */
  unauthorized: (challenge: string, reason: string): Response =>
    rpcError(401, -32001, 'Unauthorized', {
      'WWW-Authenticate':
        reason === 'missing'
          ? challenge
          : `${challenge}, error="${reason === 'malformed' ? 'invalid_request' : 'invalid_token'}"`,
    }),
  /** The credential store could not be read: never a reason to let anyone in; clients retry. */
  credentialsUnavailable: (): Response =>
    rpcError(503, -32603, 'Service unavailable', { 'Retry-After': '5' }),
  /** A body that could not be read (`busy_credential` is a 429: see `rateLimitedResponse`). */
  body: (failure: Exclude<BodyFailure, 'busy_credential'>, maxBytes: number): Response => {
    switch (failure) {
      case 'too_large':
        return rpcError(413, -32600, `Request body larger than ${maxBytes} bytes`)
      case 'timeout':
        return rpcError(408, -32600, 'Request body not received in time')
      case 'busy':
        return rpcError(503, -32603, 'Too many requests in progress', { 'Retry-After': '1' })
      case 'aborted':
        return rpcError(400, -32600, 'Request body incomplete')
    }
  },
  parseError: (): Response => rpcError(400, -32700, 'Parse error: the body is not JSON'),
  /** A body over the bounds of `http/json-shape.ts`, refused before it is parsed. */
  tooComplex: (maxDepth: number, maxValues: number): Response =>
    rpcError(
      400,
      -32600,
      `Request too complex: at most ${maxDepth} levels of nesting and ${maxValues} values per request`,
    ),
  emptyBatch: (): Response => rpcError(400, -32600, 'Empty batch'),
  batchTooLarge: (maxBatch: number): Response =>
    rpcError(400, -32600, `Batch too large: at most ${maxBatch} messages per request`),
  duplicateIds: (): Response =>
    rpcError(400, -32600, 'Batch has two requests with the same id: each answer could not be told apart'),
  internal: (): Response => rpcError(500, -32603, 'Internal error'),
} as const

/**
 * The 429 for a rate-limited request: one JSON-RPC error per request id of it (an array for a
 * batch), `Retry-After` and the hint in milliseconds. `waitMs` is at least `minimumMs`: never
 * "retry now", since a refused client that retries at once meets the same refusal.
 */
export function rateLimitedResponse(
  ids: readonly unknown[],
  waitMs: number,
  batch: boolean,
  minimumMs: number,
  message = 'Rate limited: too many calls for this credential',
): Response {
  // Never "retry now": a refused client that retries at once meets the same refusal. The hint is
  // at least the time the credential's bucket takes to earn back one call, and at least the
  // second that `Retry-After` can express (the two never disagree).
  const wait = Math.max(minimumMs, 1000, Math.ceil(waitMs))
  const error = {
    code: -32000,
    message: `${message}; retry after ${wait} ms`,
    data: { code: 'rate_limited', retryAfterMs: wait },
  }
  const answers = ids.map((id) => ({ jsonrpc: '2.0', id: id ?? null, error }))
  const body = batch ? answers : (answers[0] ?? { jsonrpc: '2.0', id: null, error })
  return jsonResponse(429, body, { 'Retry-After': String(Math.max(1, Math.ceil(wait / 1000))) })
}
