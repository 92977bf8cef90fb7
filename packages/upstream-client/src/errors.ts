/** Every code an {@link UpstreamError} can carry. */
export type UpstreamErrorCode =
  /** The runtime answered with a non-2xx status other than 404. */
  | 'ERR_UPSTREAM_HTTP'
  /** The runtime answered 404 (unknown session, message, permission or question). */
  | 'ERR_UPSTREAM_NOT_FOUND'
  /** No complete answer within the per-request timeout. */
  | 'ERR_UPSTREAM_TIMEOUT'
  /** The request never got an HTTP answer (connection refused, reset, DNS, …). */
  | 'ERR_UPSTREAM_NETWORK'
  /** A 2xx answer whose body is not what this client expects (failed zod validation, bad JSON). */
  | 'ERR_UPSTREAM_SCHEMA'

/** The longest `body` excerpt an {@link UpstreamError} keeps. */
export const MAX_ERROR_BODY_LENGTH = 500

const marker = Symbol.for('sallyport.upstream-client.UpstreamError')

/** What {@link UpstreamError}'s constructor takes besides the code and message. */
export interface UpstreamErrorInit {
  /** Operation name, e.g. `session.get` (the runtime's operationId). */
  readonly operation: string
  /** HTTP status, or `undefined` for network failures and timeouts. */
  readonly status?: number | undefined
  /** Already redacted and truncated excerpt of the response body. */
  readonly body?: string | undefined
  readonly isRetryable: boolean
  /** Already sanitised: never a Request, Response, header set or credential. */
  readonly cause?: unknown
}

/**
 * The one error of this package: an upstream call that failed. Carries the operation name, the
 * HTTP status, a truncated body excerpt and whether a retry could help. It never carries the
 * Basic credential, a request or a header set (the body and `cause` are scrubbed first).
 *
 * @example
 * try { await client.getSession(id) }
 * catch (error) { if (UpstreamError.isInstance(error) && error.code === 'ERR_UPSTREAM_NOT_FOUND') … }
 */
export class UpstreamError extends Error {
  readonly code: UpstreamErrorCode
  readonly operation: string
  readonly status: number | undefined
  readonly body: string | undefined
  readonly isRetryable: boolean
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true

  constructor(code: UpstreamErrorCode, message: string, init: UpstreamErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = 'UpstreamError'
    this.code = code
    this.operation = init.operation
    this.status = init.status
    this.body = init.body
    this.isRetryable = init.isRetryable
  }

  /** True for an {@link UpstreamError}, also one thrown by another copy of this package. */
  static isInstance(value: unknown): value is UpstreamError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}

/** Whether an HTTP status is worth retrying: 408, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}
