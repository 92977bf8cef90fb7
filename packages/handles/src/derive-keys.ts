import { requireSubtle, type WebCryptoKey } from './web-crypto.ts'

const encoder = new TextEncoder()

// Distinct HKDF `info` strings give independent keys for handles and ownership records from one
// secret: a MAC can never be replayed as ciphertext or the other way round. They are part of the
// format: changing one invalidates every handle or record already issued.
export const HANDLE_KEY_INFO = 'agentgate/handles/v1 aes-256-gcm'
export const OWNERSHIP_KEY_INFO = 'agentgate/ownership/v1 hmac-sha256'

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
