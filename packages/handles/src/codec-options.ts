// Handle kinds and their lifetimes, and the options of `createHandleCodec`, checked once at creation.

import type { CryptoBackend } from './aead.ts'
import { MAX_TIMESTAMP_MS } from './handle-format.ts'
import { copySecret } from './web-crypto.ts'

/**
 * What a handle stands for; the kind is bound into the handle, so one kind never opens as another.
 * `request_state` is the state of a multi round-trip request (MCP 2026-07-28 `requestState`):
 * what a retried call needs, sealed and short-lived.
 */
export type HandleKind = 'session' | 'message' | 'job' | 'interaction' | 'request_state'

/** Every handle kind, in a fixed order. */
export const HANDLE_KINDS: readonly HandleKind[] = Object.freeze([
  'session',
  'message',
  'job',
  'interaction',
  'request_state',
])

const MINUTE_MS = 60 * 1000
const HOUR_MS = 60 * MINUTE_MS
const DAY_MS = 24 * HOUR_MS

/** Default lifetimes (spec "Opaque handles"; message handles follow sessions). */
export const DEFAULT_LIFETIMES_MS: Readonly<Record<HandleKind, number>> = Object.freeze({
  session: 30 * DAY_MS,
  message: 30 * DAY_MS,
  job: DAY_MS,
  interaction: HOUR_MS,
  // Long enough for a person to answer a dialog, short enough that a copy left behind is soon dead.
  request_state: 15 * MINUTE_MS,
})

/**
 * Longest lifetime accepted (2^40 ms, about 34 years). Keeps every expiry inside the 48-bit
 * timestamp of the handle format for thousands of years.
 */
export const MAX_LIFETIME_MS = 2 ** 40

/** True when `value` is one of {@link HANDLE_KINDS}. */
export function isHandleKind(value: unknown): value is HandleKind {
  return typeof value === 'string' && (HANDLE_KINDS as readonly string[]).includes(value)
}

/** Options of `createHandleCodec`. */
export interface HandleCodecOptions {
  /** The handle secret (at least 32 bytes); copied at creation. */
  secret: Uint8Array
  /** Lifetime per kind in milliseconds; unset kinds keep {@link DEFAULT_LIFETIMES_MS}. */
  lifetimesMs?: Partial<Record<HandleKind, number>>
  /** Clock in milliseconds since the epoch; defaults to `Date.now`. */
  now?: () => number
  /**
   * The crypto used: `auto` (default: node:crypto where the runtime offers it, else Web Crypto)
   * or `web-crypto`. Both produce and open the same handles.
   */
  backend?: CryptoBackend
}

/** Options after validation. */
export interface ResolvedCodecOptions {
  secret: Uint8Array
  lifetimesMs: Readonly<Record<HandleKind, number>>
  now: () => number
  backend: CryptoBackend
}

/**
 * Checks a lifetime: a positive integer number of milliseconds, at most `MAX_LIFETIME_MS`.
 * @throws TypeError when not a number; RangeError when out of range or not an integer.
 */
export function checkLifetime(value: unknown, name: string): number {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number of milliseconds`)
  if (!Number.isInteger(value) || value <= 0 || value > MAX_LIFETIME_MS) {
    throw new RangeError(
      `${name} must be a positive integer number of milliseconds, at most ${MAX_LIFETIME_MS}`,
    )
  }
  return value
}

/**
 * Reads the clock as whole milliseconds.
 * @throws RangeError when the clock returns a negative, non-finite or far-future value.
 */
export function readClock(now: () => number): number {
  const value = now()
  // Leaves room for the longest lifetime inside the 48-bit expiry field.
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    value > MAX_TIMESTAMP_MS - MAX_LIFETIME_MS
  ) {
    throw new RangeError('now() must return a time in milliseconds since the epoch')
  }
  return Math.floor(value)
}

/**
 * Validates `createHandleCodec` options once, at creation, so misconfiguration never surfaces on
 * a first request.
 * @throws TypeError or RangeError naming the bad option (never its value).
 */
export function resolveCodecOptions(options: unknown): ResolvedCodecOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object')
  const { secret, lifetimesMs, now, backend } = options as Record<string, unknown>
  const copied = copySecret(secret)
  const lifetimes: Record<HandleKind, number> = { ...DEFAULT_LIFETIMES_MS }
  if (lifetimesMs !== undefined) {
    if (typeof lifetimesMs !== 'object' || lifetimesMs === null) {
      throw new TypeError('lifetimesMs must be an object')
    }
    for (const [kind, value] of Object.entries(lifetimesMs)) {
      // An unknown key is most likely a typo ("sessions"): refuse it rather than ignore it.
      if (!isHandleKind(kind))
        throw new TypeError(`lifetimesMs keys must be one of ${HANDLE_KINDS.join(', ')}`)
      if (value !== undefined) lifetimes[kind] = checkLifetime(value, `lifetimesMs.${kind}`)
    }
  }
  if (now !== undefined && typeof now !== 'function') throw new TypeError('now must be a function')
  if (backend !== undefined && backend !== 'auto' && backend !== 'web-crypto')
    throw new TypeError("backend must be 'auto' or 'web-crypto'")
  return {
    secret: copied,
    lifetimesMs: Object.freeze(lifetimes),
    now: (now as (() => number) | undefined) ?? Date.now,
    backend: (backend as CryptoBackend | undefined) ?? 'auto',
  }
}
