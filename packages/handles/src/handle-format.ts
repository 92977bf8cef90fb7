import type { HandleKind } from './codec-options.ts'
import { base64UrlLength, decodeBase64Url, encodeBase64Url, encodeLengthPrefixed } from './encoding.ts'
import type { HandleErrorCode } from './errors.ts'
import { GCM_IV_BYTES, GCM_TAG_BYTES } from './web-crypto.ts'

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

// Plaintext layout inside a handle, compact so a job handle stays short enough to paste:
//   issuedAt (uint48, big-endian, ms since epoch) ‖ expiresAt (uint48) ‖ UTF-8 JSON of the payload
// Timestamps take 12 bytes instead of ~40 as JSON fields; 48 bits reach the year 10889.

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Bytes taken by the two timestamps in front of the payload. */
export const PLAINTEXT_HEADER_BYTES = 12

/** Largest timestamp the 48-bit fields hold. */
export const MAX_TIMESTAMP_MS = 2 ** 48 - 1

/** Smallest plaintext: the header plus `{}`. */
export const MIN_PLAINTEXT_BYTES = PLAINTEXT_HEADER_BYTES + 2

/** What a handle's plaintext carries. */
export interface HandleClaims {
  issuedAt: number
  expiresAt: number
  payload: Record<string, unknown>
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * JSON-encodes a payload. Values JSON cannot carry are not preserved (`undefined` fields vanish,
 * a `Date` comes back as a string), as with any JSON API.
 * @throws TypeError when the payload is not a plain object or cannot be JSON-encoded.
 */
export function encodePayload(payload: unknown): Uint8Array {
  if (!isPlainObject(payload)) throw new TypeError('payload must be a plain object')
  let json: string | undefined
  try {
    json = JSON.stringify(payload)
  } catch (cause) {
    throw new TypeError('payload must be JSON-serializable', { cause })
  }
  // A `toJSON` member could turn the object into something else; the codec only carries objects.
  if (json === undefined || !json.startsWith('{')) throw new TypeError('payload must encode as a JSON object')
  return encoder.encode(json)
}

function writeUint48(view: DataView, offset: number, value: number): void {
  view.setUint16(offset, Math.floor(value / 2 ** 32))
  view.setUint32(offset + 2, value % 2 ** 32)
}

function readUint48(view: DataView, offset: number): number {
  return view.getUint16(offset) * 2 ** 32 + view.getUint32(offset + 2)
}

/** Lays out the plaintext; timestamps must be integers in [0, MAX_TIMESTAMP_MS]. */
export function encodePlaintext(issuedAt: number, expiresAt: number, payloadJson: Uint8Array): Uint8Array {
  const out = new Uint8Array(PLAINTEXT_HEADER_BYTES + payloadJson.length)
  const view = new DataView(out.buffer)
  writeUint48(view, 0, issuedAt)
  writeUint48(view, 6, expiresAt)
  out.set(payloadJson, PLAINTEXT_HEADER_BYTES)
  return out
}

/**
 * Reads a plaintext back; `null` when it is not one. Only reached after authentication succeeded,
 * so a `null` here means a bug or a forged key, and is treated like any other invalid handle.
 */
export function decodePlaintext(bytes: Uint8Array): HandleClaims | null {
  if (bytes.length < MIN_PLAINTEXT_BYTES) return null
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const issuedAt = readUint48(view, 0)
  const expiresAt = readUint48(view, 6)
  let payload: unknown
  try {
    payload = JSON.parse(decoder.decode(bytes.subarray(PLAINTEXT_HEADER_BYTES)))
  } catch {
    return null
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null
  return { issuedAt, expiresAt, payload: payload as Record<string, unknown> }
}

const DOMAIN = 'sallyport/handle'

/**
 * Additional authenticated data of a handle: version, kind and the credential's internal
 * identity, length-prefixed. A handle therefore opens only as the kind, for the identity and in
 * the version it was sealed for, although none of them is stored in it.
 */
export function handleAad(kind: HandleKind, identity: string): Uint8Array {
  return encodeLengthPrefixed([DOMAIN, HANDLE_VERSION, kind, identity])
}
