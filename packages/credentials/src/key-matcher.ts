import { createHash, timingSafeEqual } from 'node:crypto'
import { checkKey } from './check-key.ts'
import type { Policy } from './schemas.ts'

/** The authenticated caller: a named credential. Handles bind to `identity`, never to `username`. */
export interface Principal {
  readonly username: string
  readonly identity: string
  readonly policy: Policy
}

/** Every reason a presented key is refused. The gateway answers all of them with 401. */
export type ResolveFailureCode =
  | 'ERR_CREDENTIALS_MISSING'
  | 'ERR_CREDENTIALS_WEAK'
  | 'ERR_CREDENTIALS_MALFORMED'
  | 'ERR_CREDENTIALS_UNKNOWN'
  | 'ERR_CREDENTIALS_DUPLICATED'

/** Result of resolving a presented key. Messages are fixed per code and never echo the key. */
export type ResolveResult =
  | { ok: true; principal: Principal }
  | { ok: false; code: ResolveFailureCode; message: string }

/** A configured key as the matcher needs it. */
export interface KeyedPrincipal extends Principal {
  readonly key: string
}

/** Matches presented keys against a fixed set of configured keys. */
export interface KeyIndex {
  readonly size: number
  match(presented: string | undefined): ResolveResult
}

/** SHA-256 of a key's UTF-8 bytes: every comparison is between 32-byte digests. */
export function digestKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest()
}

/**
 * Builds the matcher over `credentials`. Keys are digested once here and dropped; only digests
 * and principals are kept. `match` digests the presented key and compares it with EVERY
 * configured digest using `timingSafeEqual`, without stopping at a hit, so neither the position
 * of the match nor the presented key's length shows in the timing. A key configured for two or
 * more usernames is refused for all of them (`ERR_CREDENTIALS_DUPLICATED`).
 */
export function buildKeyIndex(credentials: readonly KeyedPrincipal[]): KeyIndex {
  const digests = credentials.map((credential) => digestKey(credential.key))
  const principals: Principal[] = credentials.map(({ username, identity, policy }) =>
    Object.freeze({ username, identity, policy }),
  )
  return {
    size: digests.length,
    match(presented) {
      const format = checkKey(presented)
      if (!format.ok) return format
      const candidate = digestKey(presented as string)
      let hits = 0
      let found = -1
      for (let index = 0; index < digests.length; index++) {
        // No early exit: every configured digest is compared on every call.
        const equal = timingSafeEqual(candidate, digests[index] as Buffer) ? 1 : 0
        hits += equal
        found = equal === 1 ? index : found
      }
      if (hits > 1) {
        return { ok: false, code: 'ERR_CREDENTIALS_DUPLICATED', message: 'credential is not unique' }
      }
      const principal = principals[found]
      if (hits === 0 || principal === undefined) {
        return { ok: false, code: 'ERR_CREDENTIALS_UNKNOWN', message: 'credential is not recognised' }
      }
      return { ok: true, principal }
    },
  }
}
