import { compactVerify, createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from 'jose'
import {
  type OAuthAlgorithm,
  type OAuthOptions,
  OAuthOptionsSchema,
  type ResolvedOAuthOptions,
} from '../config.js'

/** A verified access token: only what mapping to a credential needs. Tokens themselves are never stored. */
export interface VerifiedToken {
  issuer: string
  subject: string
}

export interface OAuthVerifier {
  readonly options: ResolvedOAuthOptions
  /** Resolves the verified (issuer, sub) pair, or `undefined` for any failure (one outcome, no detail). */
  verify(token: string): Promise<VerifiedToken | undefined>
}

/** Allowed difference between our clock and the issuer's, in seconds (`exp`, `nbf` and `iat`). */
const CLOCK_SKEW_S = 30

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** True when a bearer value has the shape of a compact JWS. */
export function looksLikeJwt(token: string): boolean {
  return token.length <= 16_384 && JWT_SHAPE.test(token)
}

/**
 * Creates the JWT verifier: signature against the configured JWKS (fetched over HTTPS and
 * cached by jose), issuer, audience, expiry (required), allowed algorithms and every required
 * scope (`scope` string or `scp` array). `iat` is optional, but when present it must be a number
 * no later than now plus the clock skew. Throws `TypeError` for invalid options.
 */
export function createOAuthVerifier(input: OAuthOptions, getKey?: JWTVerifyGetKey): OAuthVerifier {
  const parsed = OAuthOptionsSchema.safeParse(input)
  if (!parsed.success) throw new TypeError(`invalid OAuth options: ${parsed.error.issues[0]?.path.join('.')}`)
  const options = parsed.data
  const keys =
    getKey ??
    createRemoteJWKSet(new URL(options.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 })
  return {
    options,
    async verify(token) {
      if (!looksLikeJwt(token)) return undefined
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms: options.algorithms,
          requiredClaims: ['exp', 'sub', 'iss'],
          clockTolerance: CLOCK_SKEW_S,
        })
        // jose checks `iat` only with `maxTokenAge` (which would make it required; the spec does
        // not). A token issued in the future beyond the skew is forged or from a broken issuer.
        // jose already refuses a non-number; 1e400 parses as Infinity and fails isFinite.
        if (
          payload.iat !== undefined &&
          (typeof payload.iat !== 'number' ||
            !Number.isFinite(payload.iat) ||
            payload.iat > Date.now() / 1000 + CLOCK_SKEW_S)
        )
          return undefined
        const granted = new Set(
          typeof payload.scope === 'string'
            ? payload.scope.split(' ')
            : Array.isArray(payload.scp)
              ? payload.scp.filter((s): s is string => typeof s === 'string')
              : [],
        )
        if (!options.scopes.every((scope) => granted.has(scope))) return undefined
        if (typeof payload.sub !== 'string' || payload.sub === '' || typeof payload.iss !== 'string')
          return undefined
        return { issuer: payload.iss, subject: payload.sub }
      } catch {
        return undefined
      }
    },
  }
}

/**
 * Signature-level check with the same algorithm allowlist the verifier uses (exposed so the
 * Wycheproof JWS vectors can run through it). Resolves true only for a valid signature by a key
 * of `keys` with an allowed algorithm.
 */
export async function verifyJwsSignature(
  token: string,
  keys: JWTVerifyGetKey,
  algorithms: readonly OAuthAlgorithm[],
): Promise<boolean> {
  try {
    await compactVerify(token, keys, { algorithms: [...algorithms] })
    return true
  } catch {
    return false
  }
}
