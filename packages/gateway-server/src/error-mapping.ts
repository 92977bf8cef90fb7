import { GatewayError, type GatewayErrorCode } from './errors.js'

// The one place where library error codes become the gateway's stable tool error codes.
// Messages are fixed strings: nothing from the original error (which may hold an upstream id,
// a handle or an absolute path) is copied into what the client sees.
const BY_LIBRARY_CODE: Record<string, [GatewayErrorCode, string]> = {
  // A raw upstream id or any string that is not a gateway handle at all.
  ERR_HANDLE_MALFORMED: ['handle_invalid', 'That is not a valid handle.'],
  // Tampered, sealed by another key, bound to another credential or another kind: the caller
  // learns nothing about whether the object exists.
  ERR_HANDLE_INVALID: ['not_found', 'Not found.'],
  ERR_HANDLE_EXPIRED: ['handle_expired', 'That handle has expired; list your sessions to get a fresh one.'],
  ERR_GUARD_DENIED: ['path_denied', 'That path is not readable through the gateway.'],
  ERR_GUARD_NOT_FOUND: ['not_found', 'Not found.'],
  ERR_GUARD_TOO_LARGE: ['too_large', 'The file is larger than the 256 KiB read limit.'],
  ERR_GUARD_NOT_TEXT: ['not_text', 'The file is not UTF-8 text.'],
  ERR_GUARD_INVALID: ['invalid_input', 'The path or query is not valid.'],
  ERR_UPSTREAM_NOT_FOUND: ['not_found', 'Not found.'],
  ERR_UPSTREAM_HTTP: ['upstream_unavailable', 'The agent runtime could not complete the request.'],
  ERR_UPSTREAM_TIMEOUT: ['upstream_unavailable', 'The agent runtime did not answer in time.'],
  ERR_UPSTREAM_NETWORK: ['upstream_unavailable', 'The agent runtime is not reachable.'],
  ERR_UPSTREAM_SCHEMA: ['upstream_unavailable', 'The agent runtime returned an unexpected response.'],
}

/** Converts anything a tool threw into a `GatewayError` with a stable code and a safe message. */
export function toGatewayError(error: unknown): GatewayError {
  if (GatewayError.isInstance(error)) return error
  const code = (error as { code?: unknown } | null)?.code
  const mapped = typeof code === 'string' ? BY_LIBRARY_CODE[code] : undefined
  if (mapped) return new GatewayError(mapped[0], mapped[1], { cause: error })
  return new GatewayError('internal', 'The gateway failed to complete the request.', { cause: error })
}

/**
 * The MCP tool result for a failure: `isError: true` with the JSON body `{ error: { code, message } }`
 * as its text content. No `structuredContent`: it would have to match the tool's output schema,
 * and 2025-era clients validate it even on errors.
 */
export function errorResult(error: GatewayError): {
  isError: true
  content: [{ type: 'text'; text: string }]
} {
  const body = { error: { code: error.code, message: error.message } }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
}
