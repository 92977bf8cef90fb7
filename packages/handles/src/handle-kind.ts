/** What a handle stands for; the kind is bound into the handle, so one kind never opens as another. */
export type HandleKind = 'session' | 'message' | 'job' | 'interaction'

/** Every handle kind, in a fixed order. */
export const HANDLE_KINDS: readonly HandleKind[] = Object.freeze(['session', 'message', 'job', 'interaction'])

const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS

/** Default lifetimes (spec "Opaque handles"; message handles follow sessions). */
export const DEFAULT_LIFETIMES_MS: Readonly<Record<HandleKind, number>> = Object.freeze({
  session: 30 * DAY_MS,
  message: 30 * DAY_MS,
  job: DAY_MS,
  interaction: HOUR_MS,
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
