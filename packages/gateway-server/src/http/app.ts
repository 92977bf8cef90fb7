import type { McpHttpHandler } from '@modelcontextprotocol/server'
import type { AuditRecord, Logger } from '../logger.js'
import type { KeyResolverLike, Principal } from '../principal.js'
import { authenticate } from './authenticate.js'
import { applyCorsHeaders, checkOrigin, preflightResponse } from './cors.js'
import type { OAuthVerifier } from './oauth.js'

export const MCP_PATH = '/mcp'
const METADATA_PATH = '/.well-known/oauth-protected-resource'

export interface AppOptions {
  resolver: KeyResolverLike
  oauth: OAuthVerifier | undefined
  allowedOrigins: ReadonlySet<string>
  mcp: Pick<McpHttpHandler, 'fetch'>
  logger: Logger
  health: () => Promise<Record<string, unknown> & { ok: boolean }>
  newRequestId: () => string
}

/** Principal and audit record handed to the per-request MCP server factory through `authInfo.extra`. */
export interface RequestScope {
  principal: Principal
  audit: AuditRecord
}

/** A web-standard `fetch` handler for the whole HTTP boundary of the gateway. */
export interface GatewayApp {
  fetch(request: Request): Promise<Response>
}

const json = (status: number, body: unknown, headers?: Record<string, string>): Response => {
  const h = new Headers(headers)
  h.set('Content-Type', 'application/json')
  h.set('Cache-Control', 'no-store')
  return new Response(JSON.stringify(body), { status, headers: h })
}

/**
 * Builds the boundary: `GET /health`, the RFC 9728 metadata routes (only with OAuth), `/mcp`
 * (origin check → preflight → authentication → MCP), and 404 for every other path. The order
 * matters: a foreign `Origin` is refused before any credential is looked at.
 */
export function createApp(options: AppOptions): GatewayApp {
  const { resolver, oauth, allowedOrigins, mcp, logger } = options
  const metadata = oauth && {
    resource: oauth.options.resource,
    authorization_servers: [oauth.options.issuer],
    scopes_supported: oauth.options.scopes,
    bearer_methods_supported: ['header'],
    resource_name: 'agentgate',
  }
  const challenge = oauth
    ? `Bearer realm="agentgate", resource_metadata="${new URL(METADATA_PATH + new URL(oauth.options.resource).pathname.replace(/\/$/, ''), oauth.options.resource).href}"`
    : 'Bearer realm="agentgate"'
  const unauthorized = (): Response =>
    json(
      401,
      { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized' } },
      { 'WWW-Authenticate': challenge },
    )

  async function serveMcp(request: Request, requestId: string, started: number): Promise<Response> {
    const origin = checkOrigin(request.headers.get('Origin'), allowedOrigins)
    if (!origin.ok) {
      logger.warn(
        { event: 'http', path: MCP_PATH, status: 403, reason: 'origin', requestId },
        'origin denied',
      )
      return json(403, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Origin not allowed' } })
    }
    if (request.method === 'OPTIONS' && origin.origin !== undefined)
      return preflightResponse(request, origin.origin)
    let auth: Awaited<ReturnType<typeof authenticate>>
    try {
      auth = await authenticate(request.headers.get('Authorization'), resolver, oauth)
    } catch (error) {
      // The credential store could not be read at all (never a reason to let anyone in, and not
      // the caller's fault either): 503, so clients retry and operators see it.
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
      return json(
        503,
        { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Service unavailable' } },
        { 'Retry-After': '5' },
      )
    }
    let response: Response
    const audit: AuditRecord = {}
    if (!auth.ok) {
      response = unauthorized()
      logger.warn(
        { event: 'http', path: MCP_PATH, status: 401, reason: auth.reason, requestId },
        'unauthorized',
      )
    } else {
      const peek = await peekRpc(request)
      audit.rpcMethod = peek.method
      // The name the client asked for; a registered tool overwrites it with its own name.
      audit.tool = peek.tool
      const scope: RequestScope = { principal: auth.principal, audit }
      response = await mcp.fetch(request, {
        authInfo: { token: 'redacted', clientId: auth.principal.username, scopes: [], extra: { scope } },
      })
      const rejected = audit.rpcMethod === 'tools/call' && audit.toolOutcome === undefined
      logger.info(
        {
          event: 'audit',
          requestId,
          username: auth.principal.username,
          auth: auth.method,
          httpMethod: request.method,
          rpcMethod: audit.rpcMethod,
          tool: audit.tool,
          // A tools/call the SDK refused before any tool of ours ran can only be an unknown (or
          // hidden) tool; otherwise the tool's own outcome, or the HTTP status.
          outcome: audit.toolOutcome ?? (response.status >= 400 || rejected ? 'error' : 'ok'),
          errorCode: audit.errorCode ?? (rejected ? 'unknown_tool' : undefined),
          status: response.status,
          durationMs: Math.round(performance.now() - started),
        },
        'mcp request',
      )
    }
    const headers = new Headers(response.headers)
    applyCorsHeaders(headers, origin.origin)
    headers.set('X-Request-Id', requestId)
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
  }

  return {
    async fetch(request) {
      const started = performance.now()
      const requestId = options.newRequestId()
      const { pathname } = new URL(request.url)
      if (pathname === MCP_PATH) return serveMcp(request, requestId, started)
      if (pathname === '/health') {
        if (request.method !== 'GET' && request.method !== 'HEAD')
          return json(405, { error: 'method not allowed' }, { Allow: 'GET, HEAD' })
        const health = await options.health()
        return json(health.ok ? 200 : 503, health)
      }
      if (metadata && (pathname === METADATA_PATH || pathname === `${METADATA_PATH}${MCP_PATH}`)) {
        // Public discovery document: readable cross-origin regardless of the /mcp allowlist.
        return json(200, metadata, { 'Access-Control-Allow-Origin': '*' })
      }
      return json(404, { error: 'not found' })
    },
  }
}

/** Reads the JSON-RPC method and tool name for the audit line without consuming the body. */
async function peekRpc(request: Request): Promise<{ method?: string; tool?: string }> {
  if (request.method !== 'POST') return {}
  try {
    const body: unknown = await request.clone().json()
    const first = (Array.isArray(body) ? body[0] : body) as
      | { method?: unknown; params?: { name?: unknown } }
      | undefined
    const safe = (v: unknown): string | undefined =>
      typeof v === 'string' && /^[\w./-]{1,64}$/.test(v) ? v : undefined
    const method = safe(first?.method)
    return { method, tool: method === 'tools/call' ? safe(first?.params?.name) : undefined }
  } catch {
    return {}
  }
}
