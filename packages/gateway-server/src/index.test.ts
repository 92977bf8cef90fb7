import { describe, expect, it } from 'vitest'
import * as config from './config.js'
import * as api from './index.js'

describe('package entries', () => {
  it('the root exports exactly the public API (no internal helpers)', () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        'DEFAULT_LIMITS',
        'GATEWAY_VERSION',
        'GatewayError',
        'GATEWAY_UPSTREAM_CONCURRENCY',
        'gatewayUpstreamOptions',
        'OAUTH_ALGORITHMS',
        'createGateway',
        'createLogger',
        'parseAllowedOrigins',
        'BLOCK_CATEGORIES',
        'MODERATOR_SYSTEM',
        'createModerationScreening',
        'createModerator',
        'parseVerdict',
        'screenLocally',
        'redactIds',
        'runtimeFromUpstream',
        'SERVER_HEAP_GROWING_PERCENT',
        'tuneHeapForServer',
      ].sort(),
    )
  })

  it('./config exports the configuration schemas, defaults and origin parsing', () => {
    expect(Object.keys(config).sort()).toEqual(
      [
        'AllowedOriginSchema',
        'AllowedOriginsSchema',
        'DEFAULT_LIMITS',
        'DEFAULT_OAUTH_ALGORITHMS',
        'GatewayLimitsSchema',
        'LIMIT_BOUNDS',
        'MAX_ALLOWED_ORIGINS',
        'OAUTH_ALGORITHMS',
        'OAuthOptionsSchema',
        'parseAllowedOrigins',
        'parseOrigin',
        'selectAllowedOrigins',
        'splitOriginList',
      ].sort(),
    )
    expect(api.DEFAULT_LIMITS).toBe(config.DEFAULT_LIMITS)
  })
})
