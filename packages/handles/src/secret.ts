/** Shortest secret accepted: 32 bytes, the strength of the AES-256 and HMAC-SHA256 keys derived from it. */
export const MIN_SECRET_BYTES = 32

/**
 * Checks a secret and returns a private copy, so a caller that later zeroes or reuses its buffer
 * cannot change (or reveal through) our keys. `new Uint8Array(x)` copies even for a `Buffer`,
 * whose `slice()` would share memory.
 * @throws TypeError when `secret` is not a Uint8Array; RangeError when it is shorter than 32 bytes.
 */
export function copySecret(secret: unknown): Uint8Array {
  if (!(secret instanceof Uint8Array)) throw new TypeError('secret must be a Uint8Array')
  if (secret.byteLength < MIN_SECRET_BYTES) {
    throw new RangeError(`secret must be at least ${MIN_SECRET_BYTES} bytes`)
  }
  return new Uint8Array(secret)
}
