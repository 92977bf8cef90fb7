import { compactVerify, createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from 'jose'
import { z } from 'zod'

/** Algorithms the spec allows for access tokens. */
export const OAUTH_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const
export type OAuthAlgorithm = (typeof OAUTH_ALGORITHMS)[number]

const httpsUrl = z
  .string()
  .url()
  .refine((v) => new URL(v).protocol === 'https:', 'must be an https:// URL')

/** OAuth resource-server settings (`agentgate config oauth`). */
export const OAuthOptionsSchema = z
  .object({
    resource: httpsUrl,
    issuer: httpsUrl,
    jwksUrl: httpsUrl,
    audience: z.string().min(1),
    scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/)).default([]),
    algorithms: z.array(z.enum(OAUTH_ALGORITHMS)).min(1).default(['RS256']),
  })
  .strict()
export type OAuthOptions = z.input<typeof OAuthOptionsSchema>
export type ResolvedOAuthOptions = z.output<typeof OAuthOptionsSchema>

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

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** True when a bearer value has the shape of a compact JWS. */
export function looksLikeJwt(token: string): boolean {
  return token.length <= 16_384 && JWT_SHAPE.test(token)
}

/**
 * Creates the JWT verifier: signature against the configured JWKS (fetched over HTTPS and
 * cached by jose), issuer, audience, expiry (required), allowed algorithms and every required
 * scope (`scope` string or `scp` array). Throws `TypeError` for invalid options.
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
          clockTolerance: 30,
        })
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
