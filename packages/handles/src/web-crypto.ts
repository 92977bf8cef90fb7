// Web Crypto only, through `globalThis.crypto`: no `node:` import, so the package runs unchanged
// in other runtimes (Deno, Bun, workers). The secret, the keys derived from it and AES-256-GCM.

/** The runtime's `SubtleCrypto`, typed from the global. */
export type Subtle = typeof globalThis.crypto.subtle

/** A Web Crypto `CryptoKey`. */
export type WebCryptoKey = Awaited<ReturnType<Subtle['deriveKey']>>

/** Returns `globalThis.crypto.subtle`; throws a `TypeError` when the runtime has no Web Crypto. */
export function requireSubtle(): Subtle {
  const subtle = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle
  if (subtle === undefined) {
    throw new TypeError('Web Crypto (globalThis.crypto.subtle) is not available in this runtime')
  }
  return subtle
}

/** `length` bytes from the runtime's CSPRNG. */
export function randomBytes(length: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(length))
}

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

const encoder = new TextEncoder()

// Distinct HKDF `info` strings give independent keys for handles and ownership records from one
// secret: a MAC can never be replayed as ciphertext or the other way round. They are part of the
// format: changing one invalidates every handle or record already issued.
export const HANDLE_KEY_INFO = 'sallyport/handles/v1 aes-256-gcm'
export const OWNERSHIP_KEY_INFO = 'sallyport/ownership/v1 hmac-sha256'

// The secret is already uniformly random (a file-backed random secret), so HKDF-Extract needs no
// salt; RFC 5869 then uses a block of zeros.
const NO_SALT = new Uint8Array(0)

function hkdf(info: string) {
  return { name: 'HKDF', hash: 'SHA-256', salt: NO_SALT, info: encoder.encode(info) }
}

async function importSecret(secret: Uint8Array): Promise<WebCryptoKey> {
  return requireSubtle().importKey('raw', secret, 'HKDF', false, ['deriveKey'])
}

/** Derives the non-extractable AES-256-GCM key that seals handles. */
export async function deriveHandleKey(secret: Uint8Array): Promise<WebCryptoKey> {
  const base = await importSecret(secret)
  return requireSubtle().deriveKey(hkdf(HANDLE_KEY_INFO), base, { name: 'AES-GCM', length: 256 }, false, [
    'encrypt',
    'decrypt',
  ])
}

/** Derives the non-extractable HMAC-SHA256 key that signs ownership records. */
export async function deriveOwnershipKey(secret: Uint8Array): Promise<WebCryptoKey> {
  const base = await importSecret(secret)
  return requireSubtle().deriveKey(
    hkdf(OWNERSHIP_KEY_INFO),
    base,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign', 'verify'],
  )
}

/**
 * Starts a derivation once, at creation, and returns the cached promise. A handler is attached so
 * a failure that nobody awaits yet is not an unhandled rejection; every `await` still sees it.
 */
export function cacheKey(derivation: Promise<WebCryptoKey>): Promise<WebCryptoKey> {
  derivation.catch(() => undefined)
  return derivation
}

/** IV length the codec uses: 96 bits, the only length GCM handles without hashing the IV. */
export const GCM_IV_BYTES = 12

/** Tag length the codec uses and requires: 128 bits. Shorter tags are never accepted. */
export const GCM_TAG_BYTES = 16

function params(iv: Uint8Array, aad: Uint8Array) {
  return { name: 'AES-GCM', iv, additionalData: aad, tagLength: GCM_TAG_BYTES * 8 }
}

/**
 * AES-256-GCM encryption; returns `ciphertext ‖ tag`.
 * @throws RangeError when the IV is not 12 bytes.
 */
export async function aesGcmEncrypt(
  key: WebCryptoKey,
  iv: Uint8Array,
  plaintext: Uint8Array,
  aad: Uint8Array,
): Promise<Uint8Array> {
  if (iv.byteLength !== GCM_IV_BYTES) throw new RangeError(`AES-GCM IV must be ${GCM_IV_BYTES} bytes`)
  return new Uint8Array(await requireSubtle().encrypt(params(iv, aad), key, plaintext))
}

/**
 * AES-256-GCM decryption of `ciphertext ‖ tag`. Returns the plaintext, or `null` when the IV
 * length is wrong, the input is shorter than a tag, or authentication fails. It never says which:
 * callers turn every `null` into the same error.
 */
export async function aesGcmDecrypt(
  key: WebCryptoKey,
  iv: Uint8Array,
  sealed: Uint8Array,
  aad: Uint8Array,
): Promise<Uint8Array | null> {
  if (iv.byteLength !== GCM_IV_BYTES || sealed.byteLength < GCM_TAG_BYTES) return null
  try {
    return new Uint8Array(await requireSubtle().decrypt(params(iv, aad), key, sealed))
  } catch {
    return null
  }
}
