import { describe, expect, it, vi } from 'vitest'
import {
  AllowedOriginSchema,
  AllowedOriginsSchema,
  DEFAULT_LIMITS,
  GatewayLimitsSchema,
  LIMIT_BOUNDS,
  OAuthOptionsSchema,
  parseAllowedOrigins,
  parseOrigin,
  selectAllowedOrigins,
} from './config.js'
import { resolveLimits } from './http/limits.js'

// The CLI loads `@sallyport/gateway-server/config` for every command: loading it must not load
// the MCP SDK, the HTTP adapter, jose or pino. Each of them is a trap here; the last test proves
// the traps fire.
const { trap } = vi.hoisted(() => ({
  trap: (name: string) => () => {
    throw new Error(`the config module loaded ${name}`)
  },
}))
vi.mock('@modelcontextprotocol/server', trap('@modelcontextprotocol/server'))
vi.mock('@modelcontextprotocol/node', trap('@modelcontextprotocol/node'))
vi.mock('jose', trap('jose'))
vi.mock('pino', trap('pino'))

describe('@sallyport/gateway-server/config', () => {
  it('loads with zod alone: no MCP SDK, jose or pino', async () => {
    const config = await import('./config.js')
    expect(config.DEFAULT_LIMITS.maxBatch).toBe(10)
  })

  it('(the traps fire: the gateway itself does load the MCP SDK and jose)', async () => {
    // vitest wraps what a mock factory throws; the trap's own error is its cause.
    const failure = (loading: Promise<unknown>) =>
      loading.then(
        () => 'loaded',
        (error: Error) => `${error.message} / ${(error.cause as Error | undefined)?.message}`,
      )
    expect(await failure(import('./mcp/server-factory.js'))).toMatch(/loaded @modelcontextprotocol\/server/)
    expect(await failure(import('./http/oauth.js'))).toMatch(/loaded jose/)
  })
})

describe('limits', () => {
  it.each([
    ['maxRequestBodyBytes', 4 * 1024 * 1024],
    ['headersTimeoutMs', 10_000],
    ['bodyTimeoutMs', 10_000],
    ['maxConnections', 512],
    ['maxInFlightBodies', 256],
    ['maxInFlightBodiesPerCredential', 16],
    ['responseStallTimeoutMs', 10_000],
    ['maxStalledResponsesPerCredential', 8],
    ['maxBatch', 10],
    ['ratePerSecond', 10],
    ['rateBurst', 300],
    ['concurrentWaits', 32],
    ['concurrentCalls', 16],
    ['concurrentRuns', 4],
    ['runsPerMinute', 60],
    ['runBurst', 16],
    ['readBytesPerOperation', 256 * 1024],
    ['runEventsPerSecond', 400],
    ['runEventBurst', 8000],
  ] as const)('defaults %s to %d, inside its own bounds', (key, value) => {
    expect(DEFAULT_LIMITS[key]).toBe(value)
    expect(value).toBeGreaterThanOrEqual(LIMIT_BOUNDS[key].min)
    expect(value).toBeLessThanOrEqual(LIMIT_BOUNDS[key].max)
  })

  it('has a default for every limit and no other', () => {
    expect(Object.keys(DEFAULT_LIMITS).sort()).toEqual(Object.keys(LIMIT_BOUNDS).sort())
    expect(Object.keys(DEFAULT_LIMITS)).toHaveLength(19)
  })

  it('fills in every omitted limit in a config file, and refuses an unknown one', () => {
    expect(GatewayLimitsSchema.parse({})).toEqual(DEFAULT_LIMITS)
    expect(GatewayLimitsSchema.parse({ maxBatch: 3 })).toEqual({ ...DEFAULT_LIMITS, maxBatch: 3 })
    expect(GatewayLimitsSchema.safeParse({ burst: 3 }).success).toBe(false)
  })

  it.each(Object.entries(LIMIT_BOUNDS))(
    'takes %s from its minimum to its maximum, no further',
    (key, bounds) => {
      const at = (value: number) => ({ [key]: value })
      for (const value of [bounds.min, bounds.max]) {
        expect(GatewayLimitsSchema.safeParse(at(value)).success).toBe(true)
        expect(resolveLimits(at(value))[key as keyof typeof DEFAULT_LIMITS]).toBe(value)
      }
      const below = bounds.integer ? bounds.min - 1 : bounds.min / 2
      for (const value of [below, bounds.max + 1]) {
        expect(GatewayLimitsSchema.safeParse(at(value)).success).toBe(false)
        expect(() => resolveLimits(at(value))).toThrow(RangeError)
      }
    },
  )

  it('wants whole numbers except for ratePerSecond, and says which limit is wrong', () => {
    expect(() => resolveLimits({ maxBatch: 2.5 })).toThrow(/^limits\.maxBatch must be an integer$/)
    expect(GatewayLimitsSchema.safeParse({ maxBatch: 2.5 }).success).toBe(false)
    expect(resolveLimits({ ratePerSecond: 2.5 }).ratePerSecond).toBe(2.5)
    expect(() => resolveLimits({ ratePerSecond: Number.NaN })).toThrow(
      /^limits\.ratePerSecond must be a number$/,
    )
    expect(() => resolveLimits({ maxBatch: 0 })).toThrow(/^limits\.maxBatch must be ≥ 1$/)
    expect(() => resolveLimits({ maxBatch: 101 })).toThrow(/^limits\.maxBatch must be ≤ 100$/)
  })
})

describe('OAuth options', () => {
  const base = {
    resource: 'https://gw.example.com/mcp',
    issuer: 'https://id.example.com',
    jwksUrl: 'https://id.example.com/jwks',
    audience: 'gw',
  }

  it('defaults to no required scope and RS256', () => {
    expect(OAuthOptionsSchema.parse(base)).toEqual({ ...base, scopes: [], algorithms: ['RS256'] })
  })

  it.each([
    ['an http:// URL', { jwksUrl: 'http://id.example.com/jwks' }],
    ['an empty audience', { audience: '' }],
    ['an audience over 2048 characters', { audience: 'a'.repeat(2049) }],
    ['a scope with a space', { scopes: ['a b'] }],
    ['more than 64 scopes', { scopes: Array.from({ length: 65 }, (_, i) => `s${i}`) }],
    ['no algorithm', { algorithms: [] }],
    ['HS256', { algorithms: ['HS256'] }],
    ['an unknown key', { extra: true }],
  ])('refuses %s', (_label, change) => {
    expect(OAuthOptionsSchema.safeParse({ ...base, ...change }).success).toBe(false)
  })
})

describe('allowed origins', () => {
  it.each([
    ['https://app.example.com', { ok: true, origin: 'https://app.example.com' }],
    ['http://localhost:5173', { ok: true, origin: 'http://localhost:5173' }],
    ['https://app.example.com/', { ok: true, origin: 'https://app.example.com' }],
    ['app.example.com', { ok: false, problem: 'not_a_url' }],
    ['https://app.example.com/path', { ok: false, problem: 'not_an_origin' }],
    ['ftp://app.example.com', { ok: false, problem: 'not_an_origin' }],
    ['https://APP.example.com', { ok: false, problem: 'not_an_origin' }],
  ])('reads %s', (value, expected) => {
    expect(parseOrigin(value)).toEqual(expected)
  })

  it('wants the exact serialised origin in a config file (no trailing slash), at most 64', () => {
    expect(AllowedOriginSchema.safeParse('https://app.example.com').success).toBe(true)
    expect(AllowedOriginSchema.safeParse('https://app.example.com/').success).toBe(false)
    expect(AllowedOriginsSchema.parse(undefined)).toEqual([])
    const many = Array.from({ length: 65 }, (_, i) => `https://a${i}.example.com`)
    expect(AllowedOriginsSchema.safeParse(many).success).toBe(false)
  })

  it('parses GATEWAY_ALLOWED_ORIGINS as a list or an array, and throws on anything else', () => {
    expect([...parseAllowedOrigins(' https://a.example.com , ,http://localhost:5173/ ')]).toEqual([
      'https://a.example.com',
      'http://localhost:5173',
    ])
    expect([...parseAllowedOrigins(['https://a.example.com', ' '])]).toEqual(['https://a.example.com'])
    expect(parseAllowedOrigins(undefined).size).toBe(0)
    expect(() => parseAllowedOrigins('app.example.com')).toThrow(/origin like https:/)
    expect(() => parseAllowedOrigins('https://a.com/path')).toThrow(/exact origin/)
  })

  it('takes the variable when it names an origin, else the configured list', () => {
    const configured = ['https://c.example.com']
    expect(selectAllowedOrigins('https://e.example.com, https://f.example.com', configured)).toEqual([
      'https://e.example.com',
      'https://f.example.com',
    ])
    for (const unset of [undefined, '', '  ', ' , '])
      expect(selectAllowedOrigins(unset, configured)).toEqual(configured)
  })
})
