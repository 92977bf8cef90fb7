/** Headers a browser Streamable HTTP client must be able to read from our responses. */
export const EXPOSED_HEADERS = ['Mcp-Session-Id', 'MCP-Protocol-Version', 'X-Request-Id', 'WWW-Authenticate']

const ALLOWED_METHODS = 'GET, POST, DELETE, OPTIONS'
// Request headers a Streamable HTTP client sends; `Authorization` must be listed explicitly
// because the `*` wildcard never covers it.
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Last-Event-ID',
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
]
const PARAM_HEADER = /^mcp-param-[a-z0-9-]{1,64}$/

export type OriginCheck = { ok: true; origin: string | undefined } | { ok: false; code: 'ERR_ORIGIN_DENIED' }

/**
 * The CORS rule of `/mcp`: no `Origin` header is a non-browser client and is allowed; an
 * `Origin` must match an allowlisted origin exactly (byte for byte, after the browser's own
 * serialisation), otherwise the request is refused before any authentication work.
 */
export function checkOrigin(origin: string | null, allowed: ReadonlySet<string>): OriginCheck {
  if (origin === null) return { ok: true, origin: undefined }
  return allowed.has(origin) ? { ok: true, origin } : { ok: false, code: 'ERR_ORIGIN_DENIED' }
}

/** Adds the CORS response headers for an allowed browser origin. */
export function applyCorsHeaders(headers: Headers, origin: string | undefined): void {
  headers.append('Vary', 'Origin')
  if (origin === undefined) return
  headers.set('Access-Control-Allow-Origin', origin)
  headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '))
}

/** Answers a CORS preflight for an allowed origin. Cookies are never allowed: credentials travel as bearer headers. */
export function preflightResponse(requestHeaders: Headers, origin: string): Response {
  const requested = (requestHeaders.get('Access-Control-Request-Headers') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => PARAM_HEADER.test(h))
  const headers = new Headers({
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': [...ALLOWED_HEADERS, ...requested].join(', '),
    'Access-Control-Max-Age': '600',
    Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  })
  return new Response(null, { status: 204, headers })
}
