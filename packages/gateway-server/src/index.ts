/**
 * The gateway's configuration: limits, OAuth options and the origin allowlist with their
 * defaults and bounds. Also at the light subpath `@sallyport/gateway-server/config` (zod only).
 */
export {
  DEFAULT_LIMITS,
  type GatewayLimits,
  OAUTH_ALGORITHMS,
  type OAuthAlgorithm,
  type OAuthOptions,
  parseAllowedOrigins,
} from './config.js'
/** The error a tool reports, with its stable code. */
export { GatewayError, type GatewayErrorCode } from './errors.js'
export { GATEWAY_UPSTREAM_CONCURRENCY, gatewayUpstreamOptions } from './fairness.js'
/** Creates the gateway: the HTTP boundary, authentication, and the MCP server per request. */
export {
  createGateway,
  GATEWAY_VERSION,
  type Gateway,
  type GatewayOptions,
  type ModeratorConnection,
} from './gateway.js'
export { SERVER_HEAP_GROWING_PERCENT, tuneHeapForServer } from './heap.js'
export type { GatewayApp } from './http/app.js'
export type { RunningServer } from './http/listen.js'
/** The pino logger the gateway writes its audit and error lines with. */
export { createLogger, type Logger } from './logger.js'
/** Moderation: the fast local screen, the moderator client and its verdict format. */
export { type LocalScreen, screenLocally } from './moderation/local-screen.js'
export { createModerationScreening } from './moderation/moderation-screening.js'
export {
  type Classification,
  createModerator,
  type Moderator,
  type ModeratorOptions,
} from './moderation/moderator.js'
export { BLOCK_CATEGORIES, type BlockCategory, MODERATOR_SYSTEM, parseVerdict } from './moderation/verdict.js'
export type { KeyResolverLike, Principal } from './principal.js'
/** Replaces upstream ids in text (the CLI passes runtime log lines through it). */
export { redactIds } from './redact.js'
/** The agent runtime as the gateway sees it, and its adapter over `@sallyport/upstream-client`. */
export type {
  ReplyOutcome,
  RuntimeMessage,
  RuntimePort,
  RuntimeSession,
  RuntimeStatus,
} from './runtime/port.js'
export { runtimeFromUpstream } from './runtime/upstream-adapter.js'
export type { Interaction, JobStatus, SessionSummary } from './schemas.js'
/** Screening of messages, answers and permission notes (moderation). */
export type {
  ScreeningHook,
  ScreeningInput,
  ScreeningVerdict,
} from './screening.js'
