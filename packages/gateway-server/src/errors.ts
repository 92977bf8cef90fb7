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

const marker = Symbol.for('sallyport.gateway-server.GatewayError')

/**
 * A failure a tool reports to its caller as an MCP tool result with `isError: true` and the body
 * `{ error: { code, message } }`. Messages are fixed per situation and never carry a handle,
 * upstream id, key or absolute path.
 */
export class GatewayError extends Error {
  readonly code: GatewayErrorCode
  // Read by isInstance through `in`, which works across copies of this package (Symbol.for).
  readonly [marker] = true
  /** Extra fixed fields of the error body (the moderation category); never client input. */
  readonly details: Readonly<Record<string, string>> | undefined
  constructor(
    code: GatewayErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, string> },
  ) {
    super(message, options)
    this.name = 'GatewayError'
    this.code = code
    this.details = options?.details
  }

  /** True for a `GatewayError`, also one created by another copy of this package. */
  static isInstance(value: unknown): value is GatewayError {
    return typeof value === 'object' && value !== null && marker in value && value instanceof Error
  }
}
