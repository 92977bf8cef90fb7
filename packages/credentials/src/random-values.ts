import { randomBytes } from 'node:crypto'

/** Source of random bytes; injected in tests, `crypto.randomBytes` otherwise. */
export type RandomSource = (size: number) => Uint8Array

export const defaultRandom: RandomSource = (size) => randomBytes(size)

/**
 * Exactly `size` bytes from `random`, copied. Throws `RangeError` if the source returns anything
 * else (not a Uint8Array, or another length).
 */
export function takeRandom(random: RandomSource, size: number): Buffer {
  const bytes = random(size)
  if (!(bytes instanceof Uint8Array) || bytes.length !== size) {
    throw new RangeError(`random source must return exactly ${size} bytes`)
  }
  return Buffer.from(bytes)
}

/**
 * A new key: `agk_` and 32 random bytes in base64url (47 characters, 256 bits of randomness).
 * Throws `RangeError` if the random source returns the wrong number of bytes.
 */
export function generateKey(random: RandomSource = defaultRandom): string {
  return `agk_${takeRandom(random, 32).toString('base64url')}`
}

/** A new internal identity: `id_` and 16 random bytes in base64url (128 bits). */
export function generateIdentity(random: RandomSource = defaultRandom): string {
  return `id_${takeRandom(random, 16).toString('base64url')}`
}

/** A short random token for temporary file names and the generation file. */
export function randomToken(random: RandomSource = defaultRandom): string {
  return takeRandom(random, 12).toString('base64url')
}
