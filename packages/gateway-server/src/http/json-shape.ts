// What a request body may hold before it is parsed: a bound on its nesting and on its number of
// values, checked in one pass over the bytes. `JSON.parse` and the validation after it cost time
// in proportion to the values (a 2.9 MB object of 250 000 keys: about 0.2 s to parse and more
// than a second to validate; a million nested arrays: 0.3 s to parse), all of it on the one
// thread every credential shares. No message of the protocol comes near either bound.

/**
 * Bytes of request body that count as one operation of the credential's rate (beyond the
 * operations the body holds): a 4 MiB body counts 16. Ordinary requests are far smaller.
 */
export const BODY_BYTES_PER_OPERATION = 256 * 1024

/** The deepest nesting of objects and arrays a request body may have. */
export const MAX_BODY_DEPTH = 32
/** The most values (roughly: commas, objects and arrays) a request body may hold. */
export const MAX_BODY_VALUES = 10_000

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/**
 * Which bound the JSON text in `bytes` (UTF-8) exceeds, if any: `depth` (objects and arrays
 * nested deeper than `maxDepth`) or `values` (more than `maxValues` counted as every object,
 * array and comma outside strings). Stops at the first excess, so a hostile body costs as much as
 * its first bytes over the bound. Does not validate: a body within the bounds may still not be JSON.
 */
export function jsonShapeExcess(
  bytes: Uint8Array,
  maxDepth: number = MAX_BODY_DEPTH,
  maxValues: number = MAX_BODY_VALUES,
): 'depth' | 'values' | undefined {
  let depth = 0
  let values = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
      continue
    }
    if (c === QUOTE) inString = true
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return 'depth'
      if (++values > maxValues) return 'values'
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--
    else if (c === COMMA && ++values > maxValues) return 'values'
  }
  return undefined
}
