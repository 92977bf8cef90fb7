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
