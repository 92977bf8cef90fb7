export { createGateway, GATEWAY_VERSION, type Gateway, type GatewayOptions } from './gateway.js'
export { GatewayError, type GatewayErrorCode } from './errors.js'
export type { GatewayApp } from './http/app.js'
export { parseAllowedOrigins, checkOrigin } from './http/cors.js'
export {
  createOAuthVerifier,
  OAUTH_ALGORITHMS,
  type OAuthOptions,
  type OAuthAlgorithm,
} from './http/oauth.js'
export type { RunningServer } from './http/listen.js'
export { createLogger, type Logger } from './logger.js'
export type { KeyResolverLike, Principal } from './principal.js'
export type { RuntimePort, RuntimeSession, RuntimeStatus } from './runtime/port.js'
export { runtimeFromUpstream } from './runtime/upstream-adapter.js'
export {
  passThroughScreening,
  type ScreeningHook,
  type ScreeningInput,
  type ScreeningVerdict,
} from './screening.js'
export { deriveJobState, type DerivedJobState } from './jobs/derive-job-state.js'
export type { JobStatus, SessionSummary, Interaction } from './schemas.js'
