import type { OwnershipSignerLike } from './owned.js'

/** Verdicts kept by default: about 10 000 sessions each for a handful of credentials (~20 MiB at most). */
export const DEFAULT_OWNERSHIP_CACHE_ENTRIES = 65_536

/** Options of {@link cachedOwnershipSigner}. */
export interface OwnershipCacheOptions {
  /** Most verdicts kept (least recently used go first). A positive integer; 0 turns caching off. */
  maxEntries?: number
}

/** What the cache holds for one (credential, session): the exact record it judged, and the verdict. */
interface Verdict {
  readonly v: number
  readonly mac: string
  readonly owned: boolean
}

/**
 * Wraps an ownership signer so that each session record is verified ONCE per credential: a
 * listing that sees the same thousands of sessions again costs a map lookup per session instead
 * of an HMAC. Bounded (least recently used verdicts go first), stateless across restarts.
 *
 * A verdict is keyed by (credential identity, session id) and holds the exact record it judged:
 * it is used only for that same record, so a session whose metadata changes (a record copied in,
 * rewritten, or removed) is verified afresh and can never ride on an older verdict. Verification
 * is a pure function of (id, identity, record), so the cached answer is the one the signer would
 * give. Only records of the signed shape (`{ v: number, mac: string }`, nothing else) are cached,
 * and the signer is handed the very copy the cache keyed on, never the caller's object (which
 * could change between the two reads). Anything else goes to the signer uncached (it refuses it).
 * Signing primes the cache: a record the gateway just wrote needs no verification.
 *
 * @throws RangeError when `maxEntries` is not a non-negative integer.
 */
export function cachedOwnershipSigner(
  signer: OwnershipSignerLike,
  options: OwnershipCacheOptions = {},
): OwnershipSignerLike {
  const maxEntries = options.maxEntries ?? DEFAULT_OWNERSHIP_CACHE_ENTRIES
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 0)
    throw new RangeError('ownership cache maxEntries must be a non-negative integer')
  // A Map iterates in insertion order: re-inserting on every hit keeps the least recently used first.
  const verdicts = new Map<string, Verdict>()
  const keyOf = (sessionId: string, identity: string): string => `${identity}\u0000${sessionId}`

  function remember(key: string, verdict: Verdict): void {
    if (maxEntries === 0) return
    verdicts.delete(key)
    verdicts.set(key, verdict)
    if (verdicts.size > maxEntries) {
      const oldest = verdicts.keys().next()
      if (!oldest.done) verdicts.delete(oldest.value)
    }
  }

  return {
    async sign(sessionId, identity) {
      const record = await signer.sign(sessionId, identity)
      const copy = signedShape(record)
      if (copy) remember(keyOf(sessionId, identity), { ...copy, owned: true })
      return record
    },
    async verify(sessionId, identity, record) {
      const copy = signedShape(record)
      if (!copy) return signer.verify(sessionId, identity, record)
      const key = keyOf(sessionId, identity)
      const known = verdicts.get(key)
      if (known && known.v === copy.v && known.mac === copy.mac) {
        verdicts.delete(key)
        verdicts.set(key, known)
        return known.owned
      }
      const owned = (await signer.verify(sessionId, identity, copy)) === true
      remember(key, { ...copy, owned })
      return owned
    },
  }
}

/**
 * A fresh copy of a record of the signed shape (exactly the own keys `v`, a number, and `mac`, a
 * string), or null for anything else. Never throws: a hostile record (a Proxy, throwing getters)
 * is null.
 */
function signedShape(record: unknown): { v: number; mac: string } | null {
  try {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) return null
    const keys = Object.keys(record)
    if (keys.length !== 2 || !Object.hasOwn(record, 'v') || !Object.hasOwn(record, 'mac')) return null
    const { v, mac } = record as { v: unknown; mac: unknown }
    return typeof v === 'number' && typeof mac === 'string' && mac.length <= 256 ? { v, mac } : null
  } catch {
    return null
  }
}
