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
