const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const RANDOM_LENGTH = 14
const MODULUS = 2n ** 48n
// The largest multiple of 62 that fits a byte: bytes at or above it are drawn again, so every
// base62 character is equally likely.
const UNBIASED_LIMIT = 248

/** Fills a buffer of `size` random bytes. Defaults to Web Crypto. */
export type RandomBytes = (size: number) => Uint8Array

const webRandom: RandomBytes = (size) => crypto.getRandomValues(new Uint8Array(size))

// Process-wide, so ids stay strictly increasing across every client in the process.
let last = -1n

/**
 * A fresh message id in the runtime's native format: `msg_` + 12 hex digits of
 * `(milliseconds × 4096 + counter) mod 2^48` + 14 base62 characters (NOTES §3).
 *
 * Ids are strictly increasing within the process, also within one millisecond (the counter) and
 * if the clock steps back (the value never goes below the last one issued), so the runtime's
 * (time, id) message order matches the order they were minted. Always mint a new one per turn:
 * the runtime appends to an existing message if an id is reused.
 *
 * @example newMessageId() // 'msg_9a1b2c3d4e5fAbC0123456789x'
 */
export function newMessageId(now: () => number = Date.now, random: RandomBytes = webRandom): string {
  const time = BigInt(Math.floor(now())) * 4096n
  last = time > last ? time : last + 1n
  const hex = (last % MODULUS).toString(16).padStart(12, '0')
  return `msg_${hex}${randomBase62(RANDOM_LENGTH, random)}`
}

function randomBase62(length: number, random: RandomBytes): string {
  let out = ''
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      if (byte < UNBIASED_LIMIT) out += BASE62[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

/** Whether a string has the shape {@link newMessageId} produces. */
export function isNativeMessageId(id: string): boolean {
  return /^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/.test(id)
}
