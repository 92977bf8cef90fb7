import type { z } from 'zod'
import { isRetryableStatus, UpstreamError } from './errors.ts'
import { raceAbort } from './race-abort.ts'
import { excerpt, type Redactor, sanitizeCause } from './redact.ts'
import type { Query, Send, Transport } from './transport.ts'

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
 * are redacted; the SDK's own error objects (which can hold the Request) never escape. A GET that
 * got no answer at all is tried once more (so a read may take up to twice the timeout).
 */
export function createInvoke(send: Send, redact: Redactor, defaultTimeoutMs: number): Invoke {
  return async (operation, schema, run, options) => {
    const first = await attempt(send, redact, defaultTimeoutMs, operation, schema, run, options)
    if (first.ok) return first.data
    // A read that got no answer (a connection that hung or was reset under load) is sent once
    // more: GET is idempotent. Anything else (an HTTP error, a bad body, a write) is not retried:
    // a write that timed out may have been applied.
    if (!(first.method === 'GET' && isNoAnswer(first.error) && !options?.signal?.aborted)) throw first.error
    const second = await attempt(send, redact, defaultTimeoutMs, operation, schema, run, options)
    if (second.ok) return second.data
    throw second.error
  }
}

const isNoAnswer = (error: unknown): boolean =>
  UpstreamError.isInstance(error) &&
  (error.code === 'ERR_UPSTREAM_TIMEOUT' || error.code === 'ERR_UPSTREAM_NETWORK')

type Attempt<T> = { ok: true; data: T } | { ok: false; error: unknown; method: string | undefined }

/** One try of one call, with its own timeout; every failure mapped as {@link createInvoke} says. */
async function attempt<S extends z.ZodType>(
  send: Send,
  redact: Redactor,
  defaultTimeoutMs: number,
  operation: string,
  schema: S,
  run: (sdk: SdkCallOptions) => Promise<SdkResult>,
  options: CallOptions | undefined,
): Promise<Attempt<z.output<S>>> {
  const controller = new AbortController()
  const timeoutMs = options?.timeoutMs ?? defaultTimeoutMs
  const caller = options?.signal
  // The caller's signal is usually long-lived: only this call's own controller is handed to the
  // SDK and to undici, and the one listener put on the caller's signal is removed in `finally`.
  const forward = (): void => controller.abort(caller?.reason)
  let response: Response | undefined
  let method: string | undefined
  // The SDK hands its fetch a ready Request; accept the general signature all the same.
  const fetchOnce: typeof fetch = async (input, init) => {
    const request = input instanceof Request && init === undefined ? input : new Request(input, init)
    method = request.method
    response = await send(request)
    return response
  }
  const fail = failureOf(operation, redact)
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
  const httpError = (status: number, body: unknown): UpstreamError => httpFailure(fail, status, body)
  const timer = setTimeout(() => controller.abort(new Timeout()), timeoutMs)
  try {
    if (caller?.aborted) forward()
    else caller?.addEventListener('abort', forward, { once: true })
    let result: SdkResult
    try {
      // Raced against the signal: not every fetch ties the response BODY to the signal (msw's
      // interceptor does not), and a stalled body must still end at the timeout. raceAbort
      // removes its listener as soon as the call settles: the result holds the SDK's Request,
      // so a listener left on the signal would keep every Request alive (finding 9).
      result = await raceAbort(run({ fetch: fetchOnce, signal: controller.signal }), controller.signal)
    } catch (error) {
      return { ok: false, error: failure(error), method }
    }
    if (!result.response) return { ok: false, error: failure(result.error), method }
    if (!result.response.ok || result.error !== undefined)
      return { ok: false, error: httpError(result.response.status, result.error), method }
    const parsed = schema.safeParse(result.data)
    if (!parsed.success)
      // No body excerpt here: a 2xx body can be a config document holding provider API keys.
      return {
        ok: false,
        method,
        error: fail('ERR_UPSTREAM_SCHEMA', 'returned a body that fails validation', {
          status: result.response.status,
          cause: new Error(parsed.error.issues.map(describeIssue).join('; ')),
          isRetryable: false,
        }),
      }
    return { ok: true, data: parsed.data }
  } finally {
    clearTimeout(timer)
    caller?.removeEventListener('abort', forward)
  }
}

type Fail = (
  code: UpstreamError['code'],
  message: string,
  extra: { status?: number; body?: unknown; cause?: unknown; isRetryable: boolean },
) => UpstreamError

/** Builds the errors of one operation: message, redacted body excerpt and cause. */
function failureOf(operation: string, redact: Redactor): Fail {
  return (code, message, extra) =>
    new UpstreamError(code, `upstream ${operation} ${message}`, {
      operation,
      status: extra.status,
      body: excerpt(extra.body, redact),
      isRetryable: extra.isRetryable,
      cause: extra.cause === undefined ? undefined : sanitizeCause(extra.cause, redact),
    })
}

/** An HTTP error status: 404 → `ERR_UPSTREAM_NOT_FOUND`, anything else `ERR_UPSTREAM_HTTP`. */
const httpFailure = (fail: Fail, status: number, body: unknown): UpstreamError =>
  status === 404
    ? fail('ERR_UPSTREAM_NOT_FOUND', 'failed: HTTP 404', { status, body, isRetryable: false })
    : fail('ERR_UPSTREAM_HTTP', `failed: HTTP ${status}`, {
        status,
        body,
        isRetryable: isRetryableStatus(status),
      })

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`
}

/** What {@link InvokeGet} resolves with: the validated body and the answer's headers. */
export interface GetResult<T> {
  readonly data: T
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
}

/** Runs one GET of the runtime as `operation` and returns its validated body (see {@link createInvokeGet}). */
export type InvokeGet = <S extends z.ZodType>(
  operation: string,
  schema: S,
  path: string,
  query: Readonly<Query>,
  options?: CallOptions,
) => Promise<GetResult<z.output<S>>>

/**
 * The reads' counterpart of {@link createInvoke}, without the SDK: one GET through the transport,
 * its answer read whole (`Transport.get`), with the same timeout (covering the body), the same
 * retry of a read that got no whole answer, and the same errors: HTTP status →
 * `ERR_UPSTREAM_HTTP`/`_NOT_FOUND` (body excerpt redacted), no answer → `_NETWORK`/`_TIMEOUT`, a
 * 2xx body that is not JSON or fails `schema` → `_SCHEMA` (no excerpt).
 */
export function createInvokeGet(
  get: Transport['get'],
  redact: Redactor,
  defaultTimeoutMs: number,
): InvokeGet {
  return async (operation, schema, path, query, options) => {
    // An id of `.` or `..` (or their encodings) would make the URL name another route.
    if (new URL(path, 'http://runtime.invalid').pathname !== path)
      throw new TypeError(`upstream ${operation}: an id in the path is not a plain segment`)
    const first = await attemptGet(get, redact, defaultTimeoutMs, operation, schema, path, query, options)
    if (first.ok) return first.data
    if (!(isNoAnswer(first.error) && !options?.signal?.aborted)) throw first.error
    const second = await attemptGet(get, redact, defaultTimeoutMs, operation, schema, path, query, options)
    if (second.ok) return second.data
    throw second.error
  }
}

async function attemptGet<S extends z.ZodType>(
  get: Transport['get'],
  redact: Redactor,
  defaultTimeoutMs: number,
  operation: string,
  schema: S,
  path: string,
  query: Readonly<Query>,
  options: CallOptions | undefined,
): Promise<{ ok: true; data: GetResult<z.output<S>> } | { ok: false; error: unknown }> {
  const controller = new AbortController()
  const timeoutMs = options?.timeoutMs ?? defaultTimeoutMs
  const caller = options?.signal
  const forward = (): void => controller.abort(caller?.reason)
  const fail = failureOf(operation, redact)
  const timer = setTimeout(() => controller.abort(new Timeout()), timeoutMs)
  try {
    if (caller?.aborted) forward()
    else caller?.addEventListener('abort', forward, { once: true })
    let answer: Awaited<ReturnType<Transport['get']>>
    try {
      // Raced against the signal, as `attempt` is: the timeout holds even for a `get` that ignores it.
      answer = await raceAbort(get(path, query, controller.signal), controller.signal)
    } catch (error) {
      if (caller?.aborted) return { ok: false, error: caller.reason }
      if (controller.signal.reason instanceof Timeout)
        return {
          ok: false,
          error: fail('ERR_UPSTREAM_TIMEOUT', `timed out after ${timeoutMs} ms`, { isRetryable: true }),
        }
      return {
        ok: false,
        error: fail('ERR_UPSTREAM_NETWORK', 'failed: no response', { cause: error, isRetryable: true }),
      }
    }
    const { status } = answer
    const text = answer.body.toString('utf8')
    if (status < 200 || status > 299) {
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // Not JSON: the text is the excerpt.
      }
      return { ok: false, error: httpFailure(fail, status, body) }
    }
    let data: unknown
    try {
      data = JSON.parse(text)
    } catch (error) {
      // Only the error's name: a JSON.parse message quotes the start of the body.
      return {
        ok: false,
        error: fail('ERR_UPSTREAM_SCHEMA', 'returned an unreadable body', {
          status,
          cause: new Error(error instanceof Error ? error.name : 'Error'),
          isRetryable: false,
        }),
      }
    }
    const parsed = schema.safeParse(data)
    if (!parsed.success)
      return {
        ok: false,
        error: fail('ERR_UPSTREAM_SCHEMA', 'returned a body that fails validation', {
          status,
          cause: new Error(parsed.error.issues.map(describeIssue).join('; ')),
          isRetryable: false,
        }),
      }
    return { ok: true, data: { data: parsed.data, headers: answer.headers } }
  } finally {
    clearTimeout(timer)
    caller?.removeEventListener('abort', forward)
  }
}
