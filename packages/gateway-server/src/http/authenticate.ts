import type { KeyResolverLike, Principal } from '../principal.js'
import { looksLikeJwt, type OAuthVerifier } from './oauth.js'

export type AuthOutcome =
  | { ok: true; principal: Principal; method: 'key' | 'oauth' }
  | { ok: false; reason: string }

const BEARER = /^Bearer ([\x21-\x7E]+)$/i

/**
 * Authenticates one `/mcp` request from its `Authorization` header. A missing, weak, malformed,
 * duplicated (two headers arrive joined by ", ", which has a space) or unknown credential fails; so does a JWT
 * that fails any check or whose (issuer, sub) is not mapped to a credential. The reason is for
 * the audit log only; every failure produces the same HTTP answer.
 */
export async function authenticate(
  header: string | null,
  resolver: KeyResolverLike,
  oauth: OAuthVerifier | undefined,
): Promise<AuthOutcome> {
  if (header === null || header === '') return { ok: false, reason: 'missing' }
  const match = BEARER.exec(header)
  if (!match?.[1]) return { ok: false, reason: 'malformed' }
  const token = match[1]
  const byKey = await resolver.resolve(token)
  if (byKey.ok) return { ok: true, principal: byKey.principal, method: 'key' }
  if (oauth && looksLikeJwt(token)) {
    const verified = await oauth.verify(token)
    if (!verified) return { ok: false, reason: 'jwt_invalid' }
    const principal = await resolver.resolveOAuth(verified.issuer, verified.subject)
    return principal ? { ok: true, principal, method: 'oauth' } : { ok: false, reason: 'jwt_unmapped' }
  }
  return { ok: false, reason: byKey.code }
}
