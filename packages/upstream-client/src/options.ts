import { createNodeFetch, type NodeFetch } from './node-fetch.ts'

/** What {@link createUpstreamClient} takes. Checked once, when the client is created. */
export interface UpstreamClientOptions {
  /** The runtime's base URL, e.g. `http://127.0.0.1:3810` (http or https, no query, no fragment). */
  readonly baseUrl: string
  /** Basic auth user name. Defaults to `opencode`, the runtime's default. */
  readonly username?: string
  /** Basic auth password (the runtime's `OPENCODE_SERVER_PASSWORD`). */
  readonly password: string
  /** The absolute workspace directory. Every request is pinned to it; no call can name another. */
  readonly directory: string
  /**
   * A fetch implementation. Defaults to a fetch over `node:http` of the client's own
   * ({@link createNodeFetch}: a keep-alive pool closed by `close()`), which spares the process
   * the memory of Node's global fetch.
   */
  readonly fetch?: typeof fetch
  /** Per-request timeout in milliseconds. Defaults to 10 000. A GET that got no answer in time (or a
   * reset connection) is sent once more, so a read can take up to twice this. */
  readonly timeoutMs?: number
  /** Clock for deadlines and message ids. Defaults to `Date.now`. */
  readonly now?: () => number
  /**
   * Most requests in flight to the runtime at once (default 32, at most 1 024); more wait their
   * turn. Bounds the connections to the runtime whatever the number of callers (the event stream
   * holds one more).
   */
  readonly maxConcurrentRequests?: number
  /**
   * Whose request this is, read when a request must wait for one of those slots (e.g. from an
   * `AsyncLocalStorage` entered per incoming call; never a secret). Waiting requests are served
   * round-robin across keys, so one caller's flood does not hold back another's; requests without
   * a key share one turn. Without it, waiting requests start in order of arrival.
   */
  readonly fairnessKey?: () => string | undefined
  /** Tuning of the shared event stream. */
  readonly events?: EventStreamOptions
}

/**
 * Tuning of the shared `GET /event` stream and of the waits that ride on it. The defaults suit
 * the runtime's 10 s heartbeat.
 */
export interface EventStreamOptions {
  /** Reconnect when nothing (not even a heartbeat) arrived for this long. Default 25 000 ms. */
  readonly heartbeatTimeoutMs?: number
  /**
   * A connection on which nothing arrived for this long is no longer trusted (`connected` turns
   * false, waits poll) until its next event: a stalled stream, told from a quiet one by the
   * missing heartbeat. Default 12 000 ms (the heartbeat's 10 s and 2 s of slack).
   */
  readonly staleAfterMs?: number
  /**
   * How often a session's waits look at the runtime while the stream is not live: one shared
   * poll per session, at a random point in the upper half of this interval. Default 1 000 ms.
   */
  readonly pollIntervalMs?: number
  /**
   * While waits are pending and the live stream has been silent this long, read the runtime's
   * run statuses once (one cheap request for all sessions) and wake the waits of a session whose
   * status changed without its event (a stall not detected yet). Default 2 000 ms.
   */
  readonly probeAfterMs?: number
  /** First reconnect delay before jitter. Default 250 ms. */
  readonly initialBackoffMs?: number
  /** Largest reconnect delay. Default 5 000 ms. */
  readonly maxBackoffMs?: number
  /** Random source in [0, 1) for the backoff and poll jitter. Default `Math.random`. */
  readonly random?: () => number
}

/** {@link UpstreamClientOptions} after checking, with every default filled in. */
export interface ResolvedOptions {
  /** Without a trailing slash: paths are appended as `${baseUrl}/session`. */
  readonly baseUrl: string
  readonly username: string
  readonly password: string
  readonly directory: string
  readonly fetch: typeof fetch
  /** The default fetch's pool, when no fetch was given: closed with the client. */
  readonly ownFetch: NodeFetch | undefined
  readonly timeoutMs: number
  readonly now: () => number
  readonly maxConcurrentRequests: number
  readonly fairnessKey: (() => string | undefined) | undefined
  readonly events: Required<EventStreamOptions>
}

/**
 * Checks the options of {@link createUpstreamClient}. Throws `TypeError` for a malformed value and
 * `RangeError` for an out-of-range number, so misconfiguration fails at start-up, not mid-request.
 */
export function resolveOptions(options: UpstreamClientOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object')
  const baseUrl = parseBaseUrl(options.baseUrl)
  const username = options.username ?? 'opencode'
  if (typeof username !== 'string' || username.length === 0 || username.includes(':'))
    throw new TypeError('username must be a non-empty string without ":"')
  if (typeof options.password !== 'string' || options.password.length === 0)
    throw new TypeError('password must be a non-empty string')
  const directory = options.directory
  if (typeof directory !== 'string' || !isAbsolute(directory))
    throw new TypeError('directory must be an absolute path')
  if (options.fetch !== undefined && typeof options.fetch !== 'function')
    throw new TypeError('fetch must be a function')
  if (options.now !== undefined && typeof options.now !== 'function')
    throw new TypeError('now must be a function')
  if (options.fairnessKey !== undefined && typeof options.fairnessKey !== 'function')
    throw new TypeError('fairnessKey must be a function')
  const events = options.events ?? {}
  const maxConcurrentRequests = requestBound(options.maxConcurrentRequests)
  // Room beyond the bound for the event stream (and a stray stream besides): the gate, not the
  // pool, is what holds requests back.
  const ownFetch =
    options.fetch === undefined ? createNodeFetch({ maxSockets: maxConcurrentRequests + 4 }) : undefined
  return {
    baseUrl,
    username,
    password: options.password,
    directory,
    fetch: options.fetch ?? (ownFetch as NodeFetch),
    ownFetch,
    timeoutMs: positive('timeoutMs', options.timeoutMs, 10_000),
    now: options.now ?? Date.now,
    maxConcurrentRequests,
    fairnessKey: options.fairnessKey,
    events: {
      heartbeatTimeoutMs: positive('events.heartbeatTimeoutMs', events.heartbeatTimeoutMs, 25_000),
      staleAfterMs: positive('events.staleAfterMs', events.staleAfterMs, 12_000),
      pollIntervalMs: positive('events.pollIntervalMs', events.pollIntervalMs, 1_000),
      probeAfterMs: positive('events.probeAfterMs', events.probeAfterMs, 2_000),
      initialBackoffMs: positive('events.initialBackoffMs', events.initialBackoffMs, 250),
      maxBackoffMs: positive('events.maxBackoffMs', events.maxBackoffMs, 5_000),
      random: events.random ?? Math.random,
    },
  }
}

function parseBaseUrl(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError('baseUrl must be a string')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new TypeError('baseUrl must be an absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError('baseUrl must use http or https')
  // Credentials go in the Authorization header only; a URL with them would leak into logs.
  if (url.username || url.password || url.search || url.hash)
    throw new TypeError('baseUrl must not carry credentials, a query or a fragment')
  return url.href.replace(/\/+$/, '')
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number`)
  return value
}

/** Upper bound of `maxConcurrentRequests`. */
export const MAX_CONCURRENT_REQUESTS = 1024

function requestBound(value: number | undefined): number {
  if (value === undefined) return 32
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_CONCURRENT_REQUESTS)
    throw new RangeError(`maxConcurrentRequests must be an integer from 1 to ${MAX_CONCURRENT_REQUESTS}`)
  return value
}
