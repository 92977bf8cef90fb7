import { GCM_IV_BYTES, GCM_TAG_BYTES } from './aes-gcm.ts'
import { base64UrlLength, decodeBase64Url, encodeBase64Url } from './base64url.ts'
import type { HandleErrorCode } from './errors.ts'
import { MIN_PLAINTEXT_BYTES } from './handle-plaintext.ts'

/** Format version; also bound into the AAD, so a handle cannot be relabelled as another version. */
export const HANDLE_VERSION = 'v1'

/** Text in front of every current handle. */
export const HANDLE_PREFIX = `${HANDLE_VERSION}.`

/** Longest handle `open` decodes (and `seal` produces); longer input is refused before decoding. */
export const MAX_HANDLE_LENGTH = 4096

// Handle-shaped: a version label, a dot, base64url text. Anything else is not a handle at all.
const HANDLE_SHAPE = /^v[0-9]{1,3}\.[A-Za-z0-9_-]+$/

/** The two byte strings a handle carries. */
export interface HandleParts {
  iv: Uint8Array
  sealed: Uint8Array
}

/** Result of {@link parseHandle}. */
export type ParsedHandle =
  | { ok: true; value: HandleParts }
  | { ok: false; code: Extract<HandleErrorCode, 'ERR_HANDLE_MALFORMED' | 'ERR_HANDLE_INVALID'> }

/** `v1.` + base64url(iv ‖ ciphertext ‖ tag). */
export function formatHandle(iv: Uint8Array, sealed: Uint8Array): string {
  const bytes = new Uint8Array(iv.length + sealed.length)
  bytes.set(iv)
  bytes.set(sealed, iv.length)
  return HANDLE_PREFIX + encodeBase64Url(bytes)
}

/** Length of the handle that carries a plaintext of `plaintextBytes` bytes. */
export function handleLength(plaintextBytes: number): number {
  return HANDLE_PREFIX.length + base64UrlLength(GCM_IV_BYTES + plaintextBytes + GCM_TAG_BYTES)
}

/**
 * Splits a handle into IV and `ciphertext ‖ tag` without any cryptography.
 *
 * The split between the two failure codes:
 * - `ERR_HANDLE_MALFORMED`: structurally not a handle at all: not a string, empty, longer than
 *   {@link MAX_HANDLE_LENGTH}, or not `v<digits>.` followed by base64url characters only. Such
 *   input is a client mistake (a raw upstream id, a pasted sentence) and reveals nothing.
 * - `ERR_HANDLE_INVALID`: handle-shaped but not a current, authentic handle: another version,
 *   base64url that does not decode canonically, too short to hold IV, tag and header, and (in
 *   the codec) every authentication failure. These all look alike to the caller on purpose.
 */
export function parseHandle(value: unknown): ParsedHandle {
  if (typeof value !== 'string' || value.length > MAX_HANDLE_LENGTH || !HANDLE_SHAPE.test(value)) {
    return { ok: false, code: 'ERR_HANDLE_MALFORMED' }
  }
  if (!value.startsWith(HANDLE_PREFIX)) return { ok: false, code: 'ERR_HANDLE_INVALID' }
  const bytes = decodeBase64Url(value.slice(HANDLE_PREFIX.length))
  if (bytes === null || bytes.length < GCM_IV_BYTES + MIN_PLAINTEXT_BYTES + GCM_TAG_BYTES) {
    return { ok: false, code: 'ERR_HANDLE_INVALID' }
  }
  return { ok: true, value: { iv: bytes.subarray(0, GCM_IV_BYTES), sealed: bytes.subarray(GCM_IV_BYTES) } }
}
