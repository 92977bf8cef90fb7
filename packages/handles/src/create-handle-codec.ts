import { createHandleAead } from './aead.ts'
import {
  checkLifetime,
  HANDLE_KINDS,
  type HandleCodecOptions,
  type HandleKind,
  isHandleKind,
  readClock,
  resolveCodecOptions,
} from './codec-options.ts'
import { isWellFormedId } from './encoding.ts'
import { HandleError } from './errors.ts'
import {
  decodePlaintext,
  encodePayload,
  encodePlaintext,
  formatHandle,
  handleAad,
  handleLength,
  MAX_HANDLE_LENGTH,
  PLAINTEXT_HEADER_BYTES,
  parseHandle,
} from './handle-format.ts'
import { GCM_IV_BYTES, randomBytes, requireSubtle } from './web-crypto.ts'

/** How far in the future a handle's issue time may lie (clock skew between replicas). */
export const MAX_CLOCK_SKEW_MS = 60_000

/** Per-call options of `HandleCodec.seal`. */
export interface SealOptions {
  /** Lifetime of this handle in milliseconds, instead of the kind's lifetime. */
  ttlMs?: number
}

/** Seals and opens opaque handles bound to a kind and a credential's internal identity. */
export interface HandleCodec {
  /**
   * Encrypts `payload` (a JSON object) into a handle that expires after the kind's lifetime.
   * @throws TypeError for an unknown kind, an identity that is not a non-empty well-formed string
   *   of at most 1024 characters, or a payload that is not a JSON-encodable plain object;
   *   RangeError for a bad `ttlMs` or a payload too large for a 4096-character handle.
   */
  seal(
    kind: HandleKind,
    identity: string,
    payload: Record<string, unknown>,
    options?: SealOptions,
  ): Promise<string>
  /**
   * Decrypts a handle sealed for this kind and identity and returns its payload.
   * @throws HandleError `ERR_HANDLE_MALFORMED` (not a handle at all), `ERR_HANDLE_INVALID` (any
   *   authentication failure, another version, issued in the future), `ERR_HANDLE_EXPIRED`;
   *   TypeError for an unknown kind or a bad identity (caller bugs, not client input).
   */
  open(kind: HandleKind, identity: string, handle: string): Promise<Record<string, unknown>>
}

function checkKindAndIdentity(kind: unknown, identity: unknown): void {
  if (!isHandleKind(kind)) throw new TypeError(`kind must be one of ${HANDLE_KINDS.join(', ')}`)
  if (!isWellFormedId(identity)) {
    throw new TypeError('identity must be a non-empty well-formed string of at most 1024 characters')
  }
}

/**
 * Creates a handle codec. Keys are derived once (HKDF-SHA256) from a copy of the secret.
 *
 * A handle is `v1.` + base64url(iv ‖ ciphertext ‖ tag): AES-256-GCM with a random 96-bit IV and
 * a 128-bit tag; the AAD binds version, kind and identity. A handle is valid while
 * `now < expiresAt` (expiry is exclusive: at `issuedAt + ttl` it has expired).
 * @throws TypeError or RangeError for bad options (secret shorter than 32 bytes: RangeError), or
 *   when the runtime has no Web Crypto.
 * @example
 * const codec = createHandleCodec({ secret })
 * const job = await codec.seal('job', identity, { s: upstreamSessionId, m: messageId })
 * const { s, m } = await codec.open('job', identity, job)
 */
export function createHandleCodec(options: HandleCodecOptions): HandleCodec {
  const { secret, lifetimesMs, now, backend } = resolveCodecOptions(options)
  requireSubtle()
  const aead = createHandleAead(secret, backend)

  return {
    async seal(kind, identity, payload, sealOptions) {
      checkKindAndIdentity(kind, identity)
      const ttlMs =
        sealOptions?.ttlMs === undefined ? lifetimesMs[kind] : checkLifetime(sealOptions.ttlMs, 'ttlMs')
      const json = encodePayload(payload)
      if (handleLength(PLAINTEXT_HEADER_BYTES + json.length) > MAX_HANDLE_LENGTH) {
        throw new RangeError(`payload is too large for a ${MAX_HANDLE_LENGTH}-character handle`)
      }
      const issuedAt = readClock(now)
      const plaintext = encodePlaintext(issuedAt, issuedAt + ttlMs, json)
      // A fresh random 96-bit IV per handle. NIST SP 800-38D allows 2^32 such encryptions per
      // key before IV collisions become a concern; one handle secret seals far fewer.
      const iv = randomBytes(GCM_IV_BYTES)
      const sealed = await aead.encrypt(iv, plaintext, handleAad(kind, identity))
      return formatHandle(iv, sealed)
    },

    async open(kind, identity, handle) {
      checkKindAndIdentity(kind, identity)
      const parsed = parseHandle(handle)
      if (!parsed.ok) throw new HandleError(parsed.code)
      const { iv, sealed } = parsed.value
      // No `cause` on authentication failures: nothing may tell a caller (or a log) why.
      const plaintext = await aead.decrypt(iv, sealed, handleAad(kind, identity))
      const claims = plaintext === null ? null : decodePlaintext(plaintext)
      if (claims === null || claims.expiresAt <= claims.issuedAt) throw new HandleError('ERR_HANDLE_INVALID')
      // Time checks only after authentication, so "expired" is never said about a forgery.
      const time = readClock(now)
      if (claims.issuedAt > time + MAX_CLOCK_SKEW_MS) throw new HandleError('ERR_HANDLE_INVALID')
      if (time >= claims.expiresAt) throw new HandleError('ERR_HANDLE_EXPIRED')
      return claims.payload
    },
  }
}
