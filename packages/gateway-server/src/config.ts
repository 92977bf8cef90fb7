import { z } from 'zod'

// The gateway's configuration, defined once: the load limits, the OAuth resource-server options
// and the browser origin allowlist, with their defaults and bounds. `createGateway` validates its
// options with these, and the CLI validates `sallyport.json` with the same schemas, through the
// light subpath `@sallyport/gateway-server/config`. This module imports zod and nothing else: the
// CLI loads it for every command, so it must never pull in the MCP SDK, jose or pino.

// ---- limits ----

/**
 * The gateway's load limits. Connection-level bounds protect the process from anyone who can
 * reach the port; per-credential bounds keep one credential (a chat bot, say) from taking the
 * runtime away from the others. Every limit has a default; `createGateway` validates them.
 */
export interface GatewayLimits {
  /** Largest accepted request body (413 above it). Default 4 MiB. */
  maxRequestBodyBytes: number
  /** The request headers must arrive within this. Default 10 s. */
  headersTimeoutMs: number
  /** Once admitted, the body must arrive within this (408 otherwise). Default 10 s. */
  bodyTimeoutMs: number
  /** Open connections at once; further connections are closed at once. Default 512. */
  maxConnections: number
  /** Admitted requests whose body is being read at once; further ones get 503. Default 256. */
  maxInFlightBodies: number
  /** The same, per credential; further ones get 429 (`rate_limited`). Default 16. */
  maxInFlightBodiesPerCredential: number
  /**
   * A response the client stops reading (its socket buffer full) must drain within this, or the
   * connection is closed. Default 10 s.
   */
  responseStallTimeoutMs: number
  /**
   * Per credential: responses held in memory because their client stopped reading; a further
   * one closes its connection. Default 8.
   */
  maxStalledResponsesPerCredential: number
  /** JSON-RPC messages in one POST (2025-era batches). Default 10. */
  maxBatch: number
  /**
   * Per credential: JSON-RPC messages per second, sustained; tool calls, resource reads and
   * protocol traffic (initialize, lists, ping, notifications) alike. Default 10.
   */
  ratePerSecond: number
  /** Per credential: burst of operations above the sustained rate. Default 300. */
  rateBurst: number
  /** Per credential: tool calls waiting on a job at once (`waitMs` > 0). Default 32. */
  concurrentWaits: number
  /**
   * Per credential: other tool calls and resource reads in progress at once (waits and runs have
   * their own limits). Default 16: a burst of reads of big sessions is served a few at a time,
   * not all at once on the gateway's one thread.
   */
  concurrentCalls: number
  /**
   * Per credential: agent runs in progress at once — from the `gateway.agent.run` call until the
   * runtime shows the run over (a run started with `waitMs: 0` keeps its slot after the call
   * returns). Default 4: each run in progress costs the runtime's one thread in proportion to
   * what the model streams (16 runs at 200 tokens/s made another credential's runs 3.4–6.9x
   * slower; 8: 1.3x/1.9x; 4: 1.15x/1.3x). While other credentials have runs in progress too, a
   * credential may start another only below its share: this divided by the number of credentials
   * with runs in progress (at least one each). A credential whose last run ended less than 5 s
   * ago still counts as running, so the share does not swing open between two of its runs.
   */
  concurrentRuns: number
  /**
   * Per credential: runs started per minute, sustained (`gateway.agent.run` calls that start a
   * run). A run costs the runtime far more than a read, so starting them back to back is what
   * one credential could take the runtime from the others with. Default 60.
   */
  runsPerMinute: number
  /** Per credential: runs that may start at once above `runsPerMinute`. Default 16. */
  runBurst: number
  /**
   * Per credential: bytes of the runtime's answers read for one call that count as one more
   * operation against the rate (a call that reads a 2 MiB session costs 8 more at 256 KiB):
   * reading a big session costs the runtime and the gateway in proportion. Default 262 144.
   */
  readBytesPerOperation: number
  /**
   * Per credential: runtime events its runs may cause a second, sustained — every chunk the model
   * streams, every part and message update, in the run's session and its subagents' sessions.
   * The runtime's work for a run grows with them, and no count of runs bounds it: a model that
   * streams 4 000 chunks at once costs the runtime's one thread about a second. A new run is
   * refused while the credential's runs have caused more than this allows; once they are a whole
   * `runEventBurst` beyond it, each of its runs that causes another event is stopped (its job
   * reads `cancelled` with `error.name` `RateLimited`). Default 400.
   */
  runEventsPerSecond: number
  /** Per credential: runtime events its runs may cause at once above `runEventsPerSecond`. Default 8 000. */
  runEventBurst: number
}

/** One limit's default, its accepted range and whether it must be a whole number. */
export interface LimitBounds {
  readonly default: number
  readonly min: number
  readonly max: number
  readonly integer: boolean
}

const bounds = (value: number, min: number, max: number, integer = true): LimitBounds =>
  Object.freeze({ default: value, min, max, integer })

/** Default, minimum and maximum of every limit: the one table both the gateway and the CLI use. */
export const LIMIT_BOUNDS: Readonly<Record<keyof GatewayLimits, LimitBounds>> = Object.freeze({
  maxRequestBodyBytes: bounds(4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
  headersTimeoutMs: bounds(10_000, 100, 120_000),
  bodyTimeoutMs: bounds(10_000, 100, 120_000),
  maxConnections: bounds(512, 1, 100_000),
  maxInFlightBodies: bounds(256, 1, 10_000),
  maxInFlightBodiesPerCredential: bounds(16, 1, 10_000),
  responseStallTimeoutMs: bounds(10_000, 100, 120_000),
  maxStalledResponsesPerCredential: bounds(8, 1, 10_000),
  maxBatch: bounds(10, 1, 100),
  ratePerSecond: bounds(10, 0.01, 100_000, false),
  rateBurst: bounds(300, 1, 1_000_000),
  concurrentWaits: bounds(32, 1, 10_000),
  concurrentCalls: bounds(16, 1, 10_000),
  concurrentRuns: bounds(4, 1, 10_000),
  runsPerMinute: bounds(60, 1, 1_000_000),
  runBurst: bounds(16, 1, 10_000),
  readBytesPerOperation: bounds(256 * 1024, 1024, 1024 * 1024 * 1024),
  runEventsPerSecond: bounds(400, 1, 10_000_000, false),
  runEventBurst: bounds(8000, 1, 1_000_000_000),
})

const limit = (key: keyof GatewayLimits) => {
  const { min, max, integer } = LIMIT_BOUNDS[key]
  return (integer ? z.number().int() : z.number()).min(min).max(max).default(LIMIT_BOUNDS[key].default)
}

/**
 * `gateway.limits` of `sallyport.json`: every limit optional (its default filled in), each within
 * its bounds, no unknown key.
 */
export const GatewayLimitsSchema = z
  .object({
    maxRequestBodyBytes: limit('maxRequestBodyBytes'),
    headersTimeoutMs: limit('headersTimeoutMs'),
    bodyTimeoutMs: limit('bodyTimeoutMs'),
    maxConnections: limit('maxConnections'),
    maxInFlightBodies: limit('maxInFlightBodies'),
    maxInFlightBodiesPerCredential: limit('maxInFlightBodiesPerCredential'),
    responseStallTimeoutMs: limit('responseStallTimeoutMs'),
    maxStalledResponsesPerCredential: limit('maxStalledResponsesPerCredential'),
    maxBatch: limit('maxBatch'),
    ratePerSecond: limit('ratePerSecond'),
    rateBurst: limit('rateBurst'),
    concurrentWaits: limit('concurrentWaits'),
    concurrentCalls: limit('concurrentCalls'),
    concurrentRuns: limit('concurrentRuns'),
    runsPerMinute: limit('runsPerMinute'),
    runBurst: limit('runBurst'),
    readBytesPerOperation: limit('readBytesPerOperation'),
    runEventsPerSecond: limit('runEventsPerSecond'),
    runEventBurst: limit('runEventBurst'),
  } satisfies Record<keyof GatewayLimits, unknown>)
  .strict()

/** The default of every limit (what `init` writes into `sallyport.json`). */
export const DEFAULT_LIMITS: Readonly<GatewayLimits> = Object.freeze(GatewayLimitsSchema.parse({}))

// ---- OAuth ----

/** Algorithms the spec allows for OAuth access tokens. */
export const OAUTH_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const
export type OAuthAlgorithm = (typeof OAUTH_ALGORITHMS)[number]
/** The algorithms accepted when none are configured. */
export const DEFAULT_OAUTH_ALGORITHMS: readonly OAuthAlgorithm[] = Object.freeze(['RS256'])

const httpsUrl = z
  .string()
  .url()
  .refine((value) => new URL(value).protocol === 'https:', 'must be an https:// URL')

/**
 * OAuth resource-server settings (`sallyport config oauth`, `createGateway({ oauth })`): HTTPS
 * URLs, an audience, the scopes every token must carry (default none, at most 64) and the
 * accepted algorithms (default RS256).
 */
export const OAuthOptionsSchema = z
  .object({
    resource: httpsUrl,
    issuer: httpsUrl,
    jwksUrl: httpsUrl,
    audience: z.string().min(1).max(2048),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be a scope token'))
      .max(64)
      .default([]),
    algorithms: z
      .array(z.enum(OAUTH_ALGORITHMS))
      .min(1)
      .default([...DEFAULT_OAUTH_ALGORITHMS]),
  })
  .strict()
/** OAuth options as given (scopes and algorithms optional). */
export type OAuthOptions = z.input<typeof OAuthOptionsSchema>
/** OAuth options with the defaults applied. */
export type ResolvedOAuthOptions = z.output<typeof OAuthOptionsSchema>

// ---- allowed origins ----

/** Most browser origins an allowlist holds. */
export const MAX_ALLOWED_ORIGINS = 64

/** Why {@link parseOrigin} refused a value. */
export type OriginProblem = 'not_a_url' | 'not_an_origin'

/**
 * Reads one allowlist entry: an exact `http(s)://host[:port]` origin, no path, query or
 * fragment (one trailing `/` is tolerated and dropped), as the browser serialises it.
 * @example parseOrigin('https://app.example.com/') // { ok: true, origin: 'https://app.example.com' }
 */
export function parseOrigin(
  value: string,
): { ok: true; origin: string } | { ok: false; problem: OriginProblem } {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return { ok: false, problem: 'not_a_url' }
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== value.replace(/\/$/, ''))
    return { ok: false, problem: 'not_an_origin' }
  return { ok: true, origin: url.origin }
}

/** The entries of a comma-separated origin list (`GATEWAY_ALLOWED_ORIGINS`), trimmed, blanks dropped. */
export function splitOriginList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

/** One origin of `gateway.allowedOrigins`, written exactly as the browser sends it. */
export const AllowedOriginSchema = z.string().refine((value) => {
  const parsed = parseOrigin(value)
  return parsed.ok && parsed.origin === value
}, 'must be an exact origin such as https://app.example.com (scheme, host, optional port; no path)')

/** `gateway.allowedOrigins`: at most 64 exact origins; default none. */
export const AllowedOriginsSchema = z.array(AllowedOriginSchema).max(MAX_ALLOWED_ORIGINS).default([])

/**
 * Parses `GATEWAY_ALLOWED_ORIGINS`: a comma-separated list (or an array) of exact origins.
 * Throws `TypeError` on anything that is not an origin, so a typo fails at start-up rather than
 * silently denying every browser.
 */
export function parseAllowedOrigins(value: string | readonly string[] | undefined): ReadonlySet<string> {
  const items = typeof value === 'string' ? splitOriginList(value) : (value ?? [])
  const origins = new Set<string>()
  for (const raw of items) {
    const item = raw.trim()
    if (item === '') continue
    const parsed = parseOrigin(item)
    if (!parsed.ok) {
      throw new TypeError(
        parsed.problem === 'not_a_url'
          ? 'GATEWAY_ALLOWED_ORIGINS: each entry must be an origin like https://app.example.com'
          : 'GATEWAY_ALLOWED_ORIGINS: each entry must be an exact origin (scheme, host, port; no path)',
      )
    }
    origins.add(parsed.origin)
  }
  return origins
}

/**
 * The origins in force: `GATEWAY_ALLOWED_ORIGINS` when it holds at least one entry, else the
 * configured list. An unset, empty or blank variable means "not set" (compose files define it
 * as `${GATEWAY_ALLOWED_ORIGINS:-}`), so it never silently replaces the configured list.
 * @example selectAllowedOrigins('', ['https://a.example']) // ['https://a.example']
 */
export function selectAllowedOrigins(envValue: string | undefined, configured: readonly string[]): string[] {
  const fromEnv = splitOriginList(envValue ?? '')
  return fromEnv.length > 0 ? fromEnv : [...configured]
}
