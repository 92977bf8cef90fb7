import { requireSubtle, type WebCryptoKey } from './web-crypto.ts'

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
