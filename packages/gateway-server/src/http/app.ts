import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server'
import { toolsFor } from '@sallyport/policy'
import { type BodyFailure, httpRefusal, jsonResponse as json, rateLimitedResponse } from '../error-mapping.js'
import { withFairnessKey } from '../fairness.js'
import type { Logger } from '../logger.js'
import type { KeyResolverLike, Principal } from '../principal.js'
import {
  type AuditBook,
  auditBook,
  type OperationRecord,
  operationFields,
  settleFromResponse,
  settleUndelivered,
} from './audit.js'
import { authenticate } from './authenticate.js'
import { applyCorsHeaders, checkOrigin, preflightResponse } from './cors.js'
import { BODY_BYTES_PER_OPERATION, jsonShapeExcess, MAX_BODY_DEPTH, MAX_BODY_VALUES } from './json-shape.js'
import type { CredentialLimiter } from './limits.js'
import type { OAuthVerifier } from './oauth.js'
import { createRefusalLog } from './refusal-log.js'

export const MCP_PATH = '/mcp'
const METADATA_PATH = '/.well-known/oauth-protected-resource'
const MCP_METHODS = new Set(['GET', 'POST', 'DELETE', 'OPTIONS'])

export interface AppOptions {
  resolver: KeyResolverLike
  oauth: OAuthVerifier | undefined
  allowedOrigins: ReadonlySet<string>
  mcp: Pick<McpHttpHandler, 'fetch'>
  logger: Logger
  health: () => Promise<Record<string, unknown> & { ok: boolean }>
  newRequestId: () => string
  limiter: CredentialLimiter
  maxBatch: number
  maxRequestBodyBytes: number
}

/** Principal, audit records and limits handed to the per-request MCP server factory through `authInfo.extra`. */
export interface RequestScope {
  principal: Principal
  audit: AuditBook
  limiter: CredentialLimiter
  /** Aborts when the client goes away before the whole answer was sent. */
  signal: AbortSignal
}

// Scopes this boundary made. Only those are ever read back: the accessor needs no cast, and
// nothing else placed in `authInfo.extra` can pass for one.
const issuedScopes = new WeakSet<object>()

/** The `authInfo` the MCP handler gets for one authenticated request, carrying its scope. */
function authInfoFor(scope: RequestScope): AuthInfo {
  issuedScopes.add(scope)
  return { token: 'redacted', clientId: scope.principal.username, scopes: [], extra: { scope } }
}

/**
 * The scope of an MCP request, read back from the `authInfo` the HTTP boundary handed to the
 * handler; `undefined` when there is none (a request that did not come through the boundary).
 */
export function requestScopeOf(authInfo: AuthInfo | undefined): RequestScope | undefined {
  const scope = authInfo?.extra?.scope
  return isRequestScope(scope) ? scope : undefined
}

function isRequestScope(value: unknown): value is RequestScope {
  return typeof value === 'object' && value !== null && issuedScopes.has(value)
}

/** The request line and headers: all the boundary looks at before it reads a byte of the body. */
export interface RequestHead {
  method: string
  url: URL
  headers: Headers
}

/** Why a body could not be read; each has its own HTTP answer. */
export class BodyError extends Error {
  readonly code: BodyFailure
  constructor(code: BodyFailure) {
    super(`request body ${code}`)
    this.name = 'BodyError'
    this.code = code
  }
}

/**
 * The reason a request's signal is aborted with when the gateway dropped its connection because
 * the client stopped reading the answer (the stall bounds of the Node adapter): its audit lines
 * say `aborted` with `errorCode` `stalled`.
 */
export class AnswerStalled extends Error {
  constructor() {
    super('answer stalled: the client stopped reading')
    this.name = 'AnswerStalled'
  }
}

/** A web-standard `fetch` handler for the whole HTTP boundary of the gateway. */
export interface GatewayApp {
  fetch(request: Request): Promise<Response>
  /**
   * Serves one request in two steps: everything that can be decided from the head (path,
   * method, Origin, credentials) is decided before `readBody` is called, so a refused request
   * never has its body read. `readBody` is told whose body it reads (the credential's username),
   * so bodies read at once can be capped per credential. `started` is when the head arrived
   * (`performance.now()`). `delivered`, when the server can tell, resolves once the answer is
   * over: true when its last byte was handed to the connection, false when the connection closed
   * or was dropped first; the audit lines wait for it, and say `ok` only when it is true.
   * Without it, an answer whose body was read to its end counts as delivered.
   */
  handle(
    head: RequestHead,
    readBody: (owner: string) => Promise<Uint8Array>,
    signal: AbortSignal,
    started: number,
    delivered?: Promise<boolean>,
  ): Promise<Response>
}

/** How long a rate-limited answer is held back. */
const TARPIT_MS = 1000

/**
 * Holds a rate-limited answer back for a second, so a client that ignores the retry hint and
 * retries at once cannot turn refusals into a flood: a timer costs nothing, a refusal answered at
 * once costs a request's worth of work every time. Resolves with the milliseconds held (less if
 * the client went away), which the retry hint then leaves out.
 */
function tarpit(signal: AbortSignal): Promise<number> {
  const start = performance.now()
  if (signal.aborted) return Promise.resolve(0)
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve(performance.now() - start)
    }
    const timer = setTimeout(done, TARPIT_MS)
    signal.addEventListener('abort', done, { once: true })
  })
}

/** The request ids of a book's operations, for one 429 answer per request. */
const requestIds = (book: AuditBook): unknown[] =>
  book.operations.filter((o) => o.id !== undefined).map((o) => o.id)

/** Reads a web `Request`'s body with the same size bound as the Node adapter. */
async function readRequestBody(request: Request, max: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN)
  if (declared > max) throw new BodyError('too_large')
  if (!request.body) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw new BodyError('too_large')
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

/**
 * Builds the boundary: `GET /health`, the RFC 9728 metadata routes (only with OAuth), `/mcp`
 * (method → origin → preflight → authentication → body → limits → MCP), and 404 for every other
 * path. The order matters: a foreign `Origin` is refused before any credential is looked at, and
 * nothing of the body is read before the credential is known.
 */
export function createApp(options: AppOptions): GatewayApp {
  const { resolver, oauth, allowedOrigins, mcp, logger, limiter } = options
  // Refused before any credential is known: at most REFUSAL_LINES_PER_SECOND lines a second.
  const refusals = createRefusalLog(logger, MCP_PATH)
  const metadata = oauth && {
    resource: oauth.options.resource,
    authorization_servers: [oauth.options.issuer],
    scopes_supported: oauth.options.scopes,
    bearer_methods_supported: ['header'],
    resource_name: 'sallyport',
  }
  const challenge = oauth
    ? `Bearer realm="sallyport", resource_metadata="${new URL(METADATA_PATH + new URL(oauth.options.resource).pathname.replace(/\/$/, ''), oauth.options.resource).href}"`
    : 'Bearer realm="sallyport"'

  async function serveMcp(
    head: RequestHead,
    readBody: (owner: string) => Promise<Uint8Array>,
    signal: AbortSignal,
    requestId: string,
    started: number,
    delivered: Promise<boolean> | undefined,
  ): Promise<Response> {
    const httpLog = (status: number, reason: string, message: string, level: 'warn' | 'info' = 'warn') =>
      logger[level]({ event: 'http', path: MCP_PATH, status, reason, requestId }, message)
    if (!MCP_METHODS.has(head.method)) {
      httpLog(405, 'method', 'method not allowed', 'info')
      return httpRefusal.methodNotAllowed([...MCP_METHODS].join(', '))
    }
    const origin = checkOrigin(head.headers.get('Origin'), allowedOrigins)
    if (!origin.ok) {
      refusals.refused(403, 'origin', 'origin denied', requestId)
      return httpRefusal.originDenied()
    }
    if (head.method === 'OPTIONS') {
      if (origin.origin !== undefined) return preflightResponse(head.headers, origin.origin)
      // Not a CORS preflight: the methods of /mcp, as `Allow` says everywhere else.
      return new Response(null, { status: 204, headers: { Allow: [...MCP_METHODS].join(', ') } })
    }
    let auth: Awaited<ReturnType<typeof authenticate>>
    try {
      auth = await authenticate(head.headers.get('Authorization'), resolver, oauth)
    } catch (error) {
      // The credential store could not be read at all (not the caller's fault): 503, so clients
      // retry and operators see it.
      logger.error(
        {
          event: 'http',
          path: MCP_PATH,
          status: 503,
          errorName: (error as Error).name,
          errorCode: (error as { code?: string }).code,
          requestId,
        },
        'credential store unavailable',
      )
      return httpRefusal.credentialsUnavailable()
    }
    if (!auth.ok) {
      refusals.refused(401, auth.reason, 'unauthorized', requestId)
      return withCors(httpRefusal.unauthorized(challenge, auth.reason), origin.origin, requestId)
    }
    const { principal } = auth
    const audit = (book: AuditBook, status: number): void => {
      const durationMs = Math.round(performance.now() - started)
      const batch = book.operations.length
      for (const op of book.operations) auditLine(op, status, durationMs, batch)
    }
    const auditLine = (op: OperationRecord, status: number, durationMs: number, batch: number): void => {
      logger.info(
        {
          event: 'audit',
          requestId,
          username: principal.username,
          auth: auth.method,
          httpMethod: head.method,
          ...operationFields(op),
          status,
          durationMs,
          ...(batch > 1 && { batch }),
        },
        'mcp request',
      )
    }
    const refuse = (book: AuditBook, response: Response, errorCode: string): Response => {
      for (const op of book.operations) {
        op.outcome = 'refused'
        op.errorCode = errorCode
      }
      audit(book, response.status)
      return withCors(response, origin.origin, requestId)
    }

    let body: Uint8Array | undefined
    let parsed: unknown
    let messages: unknown[] | undefined
    if (head.method === 'POST') {
      try {
        body = await readBody(principal.username)
      } catch (error) {
        const code = error instanceof BodyError ? error.code : 'aborted'
        const answer =
          code === 'busy_credential'
            ? rateLimitedResponse(
                [],
                1000,
                false,
                limiter.tokenMs,
                'Rate limited: too many requests of this credential are being received at once',
              )
            : httpRefusal.body(code, options.maxRequestBodyBytes)
        return refuse(auditBook(undefined), answer, `body_${code}`)
      }
      // A large body costs the one shared thread in proportion to its size (parsing, validation),
      // whatever it holds: it counts against the credential's rate as one operation per
      // BODY_BYTES_PER_OPERATION, and is refused while the credential cannot afford that.
      const sizeCost = Math.floor(body.byteLength / BODY_BYTES_PER_OPERATION)
      const sizeWait = sizeCost === 0 ? undefined : limiter.take(principal.username, sizeCost)
      if (sizeWait !== undefined) {
        const held = await tarpit(signal)
        return refuse(
          auditBook(undefined),
          rateLimitedResponse(
            [],
            sizeWait - held,
            false,
            limiter.tokenMs,
            'Rate limited: too many large requests for this credential',
          ),
          'rate_limited',
        )
      }
      const excess = jsonShapeExcess(body)
      if (excess !== undefined) {
        // Refused bodies count too, so a stream of them is limited like any calls.
        limiter.charge(principal.username, 1)
        return refuse(
          auditBook(undefined),
          httpRefusal.tooComplex(MAX_BODY_DEPTH, MAX_BODY_VALUES),
          `body_${excess}`,
        )
      }
      try {
        parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'))
      } catch {
        limiter.charge(principal.username, 1)
        return refuse(auditBook(undefined), httpRefusal.parseError(), 'parse_error')
      }
      messages = Array.isArray(parsed) ? parsed : [parsed]
      if (messages.length === 0)
        return refuse(auditBook(undefined), httpRefusal.emptyBatch(), 'invalid_request')
    }
    const book = auditBook(messages)
    if (messages && messages.length > options.maxBatch) {
      // Refused batches still count against the rate, so a stream of them is limited too.
      limiter.take(principal.username, options.maxBatch)
      return refuse(book, httpRefusal.batchTooLarge(options.maxBatch), 'batch_too_large')
    }
    if (messages && messages.length > 1 && hasDuplicateIds(book)) {
      // The answers are matched to requests by id: two requests with one id would run and only
      // one answer could be delivered (and told apart). Refused whole, nothing runs; counted.
      limiter.take(principal.username, messages.length)
      return refuse(book, httpRefusal.duplicateIds(), 'duplicate_id')
    }
    // Every message counts against the rate: protocol traffic (initialize, lists, ping,
    // notifications) costs the one shared thread about as much as a cheap call, and 16 connections
    // sending nothing but `tools/list` or `ping` held another credential's workflow at 2–3x while
    // it was not counted. A request without a body (GET, DELETE) counts as one.
    const wait = limiter.take(principal.username, messages?.length ?? 1)
    if (wait !== undefined) {
      const held = await tarpit(signal)
      return refuse(
        book,
        rateLimitedResponse(requestIds(book), wait - held, Array.isArray(parsed), limiter.tokenMs),
        'rate_limited',
      )
    }
    // A tools/call of a tool this credential does not have is refused by the SDK; say which.
    const allowed = new Set<string>(toolsFor(principal.policy))
    messages?.forEach((message, i) => {
      const op = book.operations[i] as OperationRecord
      const name = (message as { params?: { name?: unknown } } | null)?.params?.name
      if (op.rpcMethod === 'tools/call' && !(typeof name === 'string' && allowed.has(name)))
        op.errorCode = 'unknown_tool'
    })
    const scope: RequestScope = { principal, audit: book, limiter, signal }
    // The body is not handed over a second time: the SDK gets it parsed (`parsedBody`, for every
    // POST) and reads nothing of the request's own.
    const request = new Request(head.url, { method: head.method, headers: head.headers, signal })
    let response: Response
    try {
      // Runtime requests made for this call wait their turn by credential (fairness.ts).
      response = await withFairnessKey(principal.username, () =>
        mcp.fetch(request, {
          authInfo: authInfoFor(scope),
          ...(parsed !== undefined && { parsedBody: parsed }),
        }),
      )
    } catch (error) {
      logger.error({ event: 'mcp_error', errorName: (error as Error).name, requestId }, 'mcp handler error')
      return refuse(book, httpRefusal.internal(), 'internal')
    }
    const contentType = response.headers.get('content-type') ?? ''
    const settle = (text: string | undefined, whole: boolean): void => {
      // A client that left first ends the stream early but cleanly: what it did not get was cut
      // short (`aborted`), not refused.
      settleFromResponse(book, text, contentType, response.status, whole)
      if (!whole) settleUndelivered(book, signal.reason instanceof AnswerStalled ? 'stalled' : undefined)
      audit(book, response.status)
    }
    const finish = (text: string | undefined, complete: boolean): void => {
      // The body read to its end is not yet the answer received: the lines wait until the last
      // byte was handed to the connection (or it closed first), and are timed to then.
      if (complete && delivered && !signal.aborted)
        void delivered.then((whole) => settle(text, whole && !signal.aborted))
      else settle(text, complete && !signal.aborted)
    }
    return withCors(response, origin.origin, requestId, observeBody(response.body, book, finish))
  }

  /** The answer with the CORS headers and the request id: the one copy of a response made. */
  const withCors = (
    response: Response,
    origin: string | undefined,
    requestId: string,
    body: ReadableStream<Uint8Array> | null = response.body,
  ): Response => {
    // Copied entry by entry: a Headers object handed to another Headers or Response constructor
    // loses its entries when a test library has replaced the global Response (msw).
    const headers = new Headers([...response.headers])
    applyCorsHeaders(headers, origin)
    headers.set('X-Request-Id', requestId)
    return new Response(body, { status: response.status, statusText: response.statusText, headers })
  }

  async function handle(
    head: RequestHead,
    readBody: (owner: string) => Promise<Uint8Array>,
    signal: AbortSignal,
    started: number,
    delivered?: Promise<boolean>,
  ): Promise<Response> {
    const requestId = options.newRequestId()
    const { pathname } = head.url
    if (pathname === MCP_PATH) return serveMcp(head, readBody, signal, requestId, started, delivered)
    if (pathname === '/health') {
      if (head.method !== 'GET' && head.method !== 'HEAD')
        return json(405, { error: 'method not allowed' }, { Allow: 'GET, HEAD' })
      const health = await options.health()
      return json(health.ok ? 200 : 503, health)
    }
    if (metadata && (pathname === METADATA_PATH || pathname === `${METADATA_PATH}${MCP_PATH}`)) {
      // Public discovery document: readable cross-origin regardless of the /mcp allowlist.
      return json(200, metadata, { 'Access-Control-Allow-Origin': '*' })
    }
    return json(404, { error: 'not found' })
  }

  return {
    handle,
    fetch(request) {
      const head = { method: request.method, url: new URL(request.url), headers: request.headers }
      return handle(
        head,
        () => readRequestBody(request, options.maxRequestBodyBytes),
        request.signal,
        performance.now(),
      )
    },
  }
}

/** Bytes of a response kept for settling outcomes from its answers; beyond it, they are not. */
const MAX_OBSERVED_BYTES = 8 * 1024 * 1024

/**
 * The response body passed through unchanged, calling `finish` once: when its last chunk has
 * been read (with the body text, for settling outcomes from the answers) or when the reader
 * gave up (`complete` false). Only chunks read while some operation is still unsettled are
 * kept: an answer a handler of ours produced was settled before it was written.
 */
function observeBody(
  source: ReadableStream<Uint8Array> | null,
  book: AuditBook,
  finish: (text: string | undefined, complete: boolean) => void,
): ReadableStream<Uint8Array> | null {
  if (!source) {
    finish(undefined, true)
    return null
  }
  const reader = source.getReader()
  const chunks: Uint8Array[] = []
  let kept = 0
  let done = false
  const end = (complete: boolean): void => {
    if (done) return
    done = true
    finish(kept > 0 ? Buffer.concat(chunks).toString('utf8') : undefined, complete)
    chunks.length = 0
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        end(false)
        controller.error(error)
        return
      }
      if (next.done) {
        controller.close()
        end(true)
        return
      }
      if (kept < MAX_OBSERVED_BYTES && book.operations.some((o) => o.outcome === undefined)) {
        chunks.push(next.value)
        kept += next.value.byteLength
      }
      controller.enqueue(next.value)
    },
    cancel(reason) {
      end(false)
      return reader.cancel(reason)
    },
  })
}

/** True when two requests (messages with a method and an id) of a batch share an id. */
function hasDuplicateIds(book: AuditBook): boolean {
  const seen = new Set<unknown>()
  for (const op of book.operations) {
    // Only requests: a method and an id (responses and notifications are never answered).
    if (op.rpcMethod === undefined || op.rpcMethod === 'invalid' || op.id === undefined || op.id === null)
      continue
    if (seen.has(op.id)) return true
    seen.add(op.id)
  }
  return false
}
