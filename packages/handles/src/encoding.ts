// Byte encodings of the formats: base64url text, length-prefixed byte strings (AAD and MAC input)
// and the identifiers they may carry. Plain TypeScript: no `Buffer` (a Node module), and not
// `atob`/`btoa`, which are lenient.

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

const encoder = new TextEncoder()

/**
 * Encodes a list of strings so that two different lists never give the same bytes: each part is
 * its UTF-8 byte length (4 bytes, big-endian) followed by its UTF-8 bytes. Used for AAD and MAC
 * input, where `("ab", "c")` and `("a", "bc")` must not collide.
 * Callers pass well-formed strings only (see `isWellFormedId`): UTF-8 encoding turns a lone
 * surrogate into U+FFFD, which would make two different strings equal.
 */
export function encodeLengthPrefixed(parts: readonly string[]): Uint8Array {
  const encoded = parts.map((part) => encoder.encode(part))
  const out = new Uint8Array(encoded.reduce((sum, bytes) => sum + 4 + bytes.length, 0))
  const view = new DataView(out.buffer)
  let offset = 0
  for (const bytes of encoded) {
    view.setUint32(offset, bytes.length)
    out.set(bytes, offset + 4)
    offset += 4 + bytes.length
  }
  return out
}

// base64url without padding (RFC 4648 §5), written out because `Buffer` is a Node module and
// `atob`/`btoa` are lenient. Decoding is strict: one string, one byte sequence.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

const DECODE = new Int16Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i

/** Length of the unpadded base64url text of `byteLength` bytes. */
export function base64UrlLength(byteLength: number): number {
  const rest = byteLength % 3
  return Math.floor(byteLength / 3) * 4 + (rest === 0 ? 0 : rest + 1)
}

/** Encodes bytes as unpadded base64url. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!
  }
  return out
}

function sextet(text: string, index: number): number {
  const code = text.charCodeAt(index)
  return code < 128 ? DECODE[code]! : -1
}

/**
 * Decodes unpadded base64url. Returns `null` for any character outside the alphabet, padding, an
 * impossible length (4n + 1), or non-zero unused trailing bits, so that no two distinct strings
 * decode to the same bytes.
 */
export function decodeBase64Url(text: string): Uint8Array | null {
  const rest = text.length % 4
  if (rest === 1) return null
  const out = new Uint8Array(Math.floor(text.length / 4) * 3 + (rest === 0 ? 0 : rest - 1))
  let o = 0
  let i = 0
  for (; i + 3 < text.length; i += 4) {
    const a = sextet(text, i)
    const b = sextet(text, i + 1)
    const c = sextet(text, i + 2)
    const d = sextet(text, i + 3)
    if ((a | b | c | d) < 0) return null
    const n = (a << 18) | (b << 12) | (c << 6) | d
    out[o++] = n >> 16
    out[o++] = (n >> 8) & 255
    out[o++] = n & 255
  }
  if (rest === 2) {
    const a = sextet(text, i)
    const b = sextet(text, i + 1)
    if ((a | b) < 0 || (b & 15) !== 0) return null
    out[o] = (a << 2) | (b >> 4)
  } else if (rest === 3) {
    const a = sextet(text, i)
    const b = sextet(text, i + 1)
    const c = sextet(text, i + 2)
    if ((a | b | c) < 0 || (c & 3) !== 0) return null
    const n = (a << 18) | (b << 12) | (c << 6)
    out[o++] = n >> 16
    out[o] = (n >> 8) & 255
  }
  return out
}
