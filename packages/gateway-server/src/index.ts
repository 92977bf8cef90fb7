export { GatewayError, type GatewayErrorCode } from './errors.js'
export { createGateway, GATEWAY_VERSION, type Gateway, type GatewayOptions } from './gateway.js'
export type { GatewayApp } from './http/app.js'
export { checkOrigin, parseAllowedOrigins } from './http/cors.js'
export type { RunningServer } from './http/listen.js'
export {
  createOAuthVerifier,
  OAUTH_ALGORITHMS,
  type OAuthAlgorithm,
  type OAuthOptions,
} from './http/oauth.js'
export { type DerivedJobState, deriveJobState } from './jobs/derive-job-state.js'
export { createLogger, type Logger } from './logger.js'
export type { KeyResolverLike, Principal } from './principal.js'
export type { RuntimePort, RuntimeSession, RuntimeStatus } from './runtime/port.js'
export { runtimeFromUpstream } from './runtime/upstream-adapter.js'
export type { Interaction, JobStatus, SessionSummary } from './schemas.js'
export {
  passThroughScreening,
  type ScreeningHook,
  type ScreeningInput,
  type ScreeningVerdict,
} from './screening.js'
