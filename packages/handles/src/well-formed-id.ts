/** Longest identity or upstream id accepted, in UTF-16 code units. */
export const MAX_ID_LENGTH = 1024

// With the `u` flag a surrogate pair is one code point, so this matches lone surrogates only.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/**
 * True for a non-empty string of at most 1024 code units without lone surrogates. Lone
 * surrogates are refused because UTF-8 encoding maps them all to U+FFFD: two different
 * identities would otherwise bind to the same bytes.
 */
export function isWellFormedId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= MAX_ID_LENGTH &&
    !LONE_SURROGATE.test(value)
  )
}
