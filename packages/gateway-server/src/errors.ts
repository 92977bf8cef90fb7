/** Stable tool-level error codes (DESIGN.md "Errors"). Clients branch on these, never on messages. */
export type GatewayErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'handle_invalid'
  | 'handle_expired'
  | 'forbidden'
  | 'blocked_by_moderation'
  | 'moderator_unavailable'
  | 'not_pending'
  | 'busy'
  | 'upstream_unavailable'
  | 'path_denied'
  | 'too_large'
  | 'not_text'
  | 'rate_limited'
  | 'internal'

/**
 * A failure a tool reports to its caller as an MCP tool result with `isError: true` and the body
 * `{ error: { code, message } }`. Messages are fixed per situation and never carry a handle,
 * upstream id, key or absolute path.
 */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode
  constructor(code: GatewayErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'GatewayError'
    this.code = code
  }

  static isInstance(value: unknown): value is GatewayError {
    return (
      value instanceof Error &&
      value.name === 'GatewayError' &&
      typeof (value as GatewayError).code === 'string'
    )
  }
}
