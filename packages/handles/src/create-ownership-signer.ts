import { decodeBase64Url, encodeBase64Url, encodeLengthPrefixed, isWellFormedId } from './encoding.ts'
import { cacheKey, copySecret, deriveOwnershipKey, requireSubtle } from './web-crypto.ts'

/**
 * Proof, stored in an upstream session's metadata, that the gateway created that session for
 * one credential: `mac` is base64url(HMAC-SHA256(ownership key, session id ‖ identity)).
 */
export interface OwnershipRecord {
  readonly v: 1
  readonly mac: string
}

/** Options of `createOwnershipSigner`. */
export interface OwnershipSignerOptions {
  /** The handle secret (at least 32 bytes); copied at creation. */
  secret: Uint8Array
}

/** Signs and verifies ownership records. */
export interface OwnershipSigner {
  /**
   * Signs the pair (upstream session id, identity).
   * @throws TypeError when either is not a non-empty well-formed string of at most 1024 characters.
   */
  sign(upstreamSessionId: string, identity: string): Promise<OwnershipRecord>
  /**
   * True only when `record` is exactly a record signed for this session id and identity. Never
   * throws: anything malformed is `false`. The MAC comparison is constant-time (Web Crypto).
   */
  verify(upstreamSessionId: string, identity: string, record: unknown): Promise<boolean>
}

const DOMAIN = 'sallyport/ownership'
const VERSION = 1
const MAC_BYTES = 32
const MAC_TEXT_LENGTH = 43

function macInput(upstreamSessionId: string, identity: string): Uint8Array {
  // Length-prefixed, so ("ses_a", "bc") and ("ses_ab", "c") sign different bytes.
  return encodeLengthPrefixed([DOMAIN, `v${VERSION}`, upstreamSessionId, identity])
}

function readMac(record: unknown): Uint8Array | null {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return null
  const keys = Object.keys(record)
  if (keys.length !== 2 || !Object.hasOwn(record, 'v') || !Object.hasOwn(record, 'mac')) return null
  const { v, mac } = record as Record<string, unknown>
  if (v !== VERSION || typeof mac !== 'string' || mac.length !== MAC_TEXT_LENGTH) return null
  const bytes = decodeBase64Url(mac)
  return bytes !== null && bytes.length === MAC_BYTES ? bytes : null
}

/**
 * Creates an ownership signer. The HMAC key is derived once (HKDF-SHA256, its own `info`) from a
 * copy of the secret, so it is independent of the handle key made from the same secret.
 * @throws TypeError or RangeError for bad options (secret shorter than 32 bytes: RangeError), or
 *   when the runtime has no Web Crypto.
 * @example
 * const signer = createOwnershipSigner({ secret })
 * const record = await signer.sign(upstreamSessionId, identity)
 * if (!(await signer.verify(upstreamSessionId, identity, metadata.owner))) refuse()
 */
export function createOwnershipSigner(options: OwnershipSignerOptions): OwnershipSigner {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object')
  const secret = copySecret((options as { secret?: unknown }).secret)
  const subtle = requireSubtle()
  const key = cacheKey(deriveOwnershipKey(secret))

  return {
    async sign(upstreamSessionId, identity) {
      if (!isWellFormedId(upstreamSessionId) || !isWellFormedId(identity)) {
        throw new TypeError('session id and identity must be non-empty well-formed strings')
      }
      const mac = await subtle.sign('HMAC', await key, macInput(upstreamSessionId, identity))
      return { v: VERSION, mac: encodeBase64Url(new Uint8Array(mac)) }
    },

    async verify(upstreamSessionId, identity, record) {
      let mac: Uint8Array | null
      try {
        // A hostile record may be a Proxy or carry throwing getters: still just `false`.
        mac = readMac(record)
      } catch {
        return false
      }
      if (mac === null || !isWellFormedId(upstreamSessionId) || !isWellFormedId(identity)) return false
      try {
        // subtle.verify compares in constant time, unlike comparing two strings.
        return await subtle.verify('HMAC', await key, mac, macInput(upstreamSessionId, identity))
      } catch {
        // The key derivation (or the runtime's crypto) failed: nothing can be verified.
        return false
      }
    },
  }
}
