import type { z } from 'zod'
import { isRetryableStatus, UpstreamError } from './errors.ts'
import { excerpt, type Redactor, sanitizeCause } from './redact.ts'
import type { Send } from './transport.ts'

/** Per-call options every client method accepts as its last argument. */
export interface CallOptions {
  /** Aborts the call; the call then rejects with the signal's reason (not an UpstreamError). */
  readonly signal?: AbortSignal
  /** Overrides the client's per-request timeout for this call. */
  readonly timeoutMs?: number
}

/** What the SDK's methods take as their second argument: the call's fetch and signal. */
export interface SdkCallOptions {
  readonly fetch: typeof fetch
  readonly signal: AbortSignal
}

/** The SDK's result tuple (`responseStyle: 'fields'`, `throwOnError: false`). */
export interface SdkResult {
  readonly data?: unknown
  readonly error?: unknown
  readonly response?: Response | undefined
}

/** Runs one SDK call as `operation` and returns its validated data. */
export type Invoke = <S extends z.ZodType>(
  operation: string,
  schema: S,
  run: (sdk: SdkCallOptions) => Promise<SdkResult>,
  options?: CallOptions,
) => Promise<z.output<S>>

class Timeout extends Error {}

/**
 * Builds the one function every client method goes through. It gives each call its own timeout
 * signal (covering the response body too), sends through the pinned transport and turns every
 * failure into one {@link UpstreamError}: HTTP status → `ERR_UPSTREAM_HTTP`/`_NOT_FOUND`, no
 * answer → `_NETWORK`/`_TIMEOUT`, a 2xx body that fails `schema` → `_SCHEMA`. Bodies and causes
 * are redacted; the SDK's own error objects (which can hold the Request) never escape.
 */
export function createInvoke(send: Send, redact: Redactor, defaultTimeoutMs: number): Invoke {
  return async (operation, schema, run, options) => {
    const controller = new AbortController()
    const timeoutMs = options?.timeoutMs ?? defaultTimeoutMs
    const timer = setTimeout(() => controller.abort(new Timeout()), timeoutMs)
    const caller = options?.signal
    const forward = (): void => controller.abort(caller?.reason)
    if (caller?.aborted) forward()
    else caller?.addEventListener('abort', forward, { once: true })
    let response: Response | undefined
    // The SDK hands its fetch a ready Request; accept the general signature all the same.
    const fetchOnce: typeof fetch = async (input, init) => {
      response = await send(input instanceof Request && init === undefined ? input : new Request(input, init))
      return response
    }
    const fail = (
      code: UpstreamError['code'],
      message: string,
      extra: { status?: number; body?: unknown; cause?: unknown; isRetryable: boolean },
    ): UpstreamError =>
      new UpstreamError(code, `upstream ${operation} ${message}`, {
        operation,
        status: extra.status,
        body: excerpt(extra.body, redact),
        isRetryable: extra.isRetryable,
        cause: extra.cause === undefined ? undefined : sanitizeCause(extra.cause, redact),
      })
    const failure = (error: unknown): unknown => {
      if (caller?.aborted) return caller.reason
      if (controller.signal.reason instanceof Timeout)
        return fail('ERR_UPSTREAM_TIMEOUT', `timed out after ${timeoutMs} ms`, { isRetryable: true })
      if (response?.ok)
        // The SDK could not read a 2xx body (bad JSON, an HTML fallback page, …). Only the
        // error's name is kept: a JSON.parse message quotes the start of the body, and a 2xx
        // body can be a config document holding provider API keys.
        return fail('ERR_UPSTREAM_SCHEMA', 'returned an unreadable body', {
          status: response.status,
          cause: new Error(error instanceof Error ? error.name : 'Error'),
          isRetryable: false,
        })
      if (response) return httpError(response.status, error)
      return fail('ERR_UPSTREAM_NETWORK', 'failed: no response', { cause: error, isRetryable: true })
    }
    const httpError = (status: number, body: unknown): UpstreamError =>
      status === 404
        ? fail('ERR_UPSTREAM_NOT_FOUND', 'failed: HTTP 404', { status, body, isRetryable: false })
        : fail('ERR_UPSTREAM_HTTP', `failed: HTTP ${status}`, {
            status,
            body,
            isRetryable: isRetryableStatus(status),
          })
    try {
      let result: SdkResult
      try {
        // Raced against the signal: not every fetch ties the response BODY to the signal (msw's
        // interceptor does not), and a stalled body must still end at the timeout.
        result = await Promise.race([
          run({ fetch: fetchOnce, signal: controller.signal }),
          rejectOnAbort(controller.signal),
        ])
      } catch (error) {
        throw failure(error)
      }
      if (!result.response) throw failure(result.error)
      if (!result.response.ok || result.error !== undefined)
        throw httpError(result.response.status, result.error)
      const parsed = schema.safeParse(result.data)
      if (!parsed.success)
        // No body excerpt here: a 2xx body can be a config document holding provider API keys.
        throw fail('ERR_UPSTREAM_SCHEMA', 'returned a body that fails validation', {
          status: result.response.status,
          cause: new Error(parsed.error.issues.map(describeIssue).join('; ')),
          isRetryable: false,
        })
      return parsed.data
    } finally {
      clearTimeout(timer)
      caller?.removeEventListener('abort', forward)
    }
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const abort = (): void => reject(signal.reason)
    if (signal.aborted) abort()
    else signal.addEventListener('abort', abort, { once: true })
  })
}

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`
}
