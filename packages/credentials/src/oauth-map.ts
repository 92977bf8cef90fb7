import { CredentialError } from './errors.ts'
import { readOAuthMap } from './read-store.ts'
import { MAX_OAUTH_MAPPINGS, type OAuthMapping } from './schemas.ts'
import type { StorePaths } from './store-paths.ts'
import type { Mutation } from './store-writer.ts'

/** Mappings sorted by username, issuer, subject: a stable file and a stable listing. */
export function sortMappings(mappings: readonly OAuthMapping[]): OAuthMapping[] {
  const order = (m: OAuthMapping) => [m.username, m.issuer, m.subject].join('\u0000')
  return [...mappings].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0))
}

async function writeMappings(paths: StorePaths, mutation: Mutation, mappings: OAuthMapping[]): Promise<void> {
  const file = { version: 1 as const, mappings: sortMappings(mappings) }
  await mutation.writeFile(paths.oauthMap, `${JSON.stringify(file, null, 2)}\n`)
}

/** Under the lock: deletes every mapping to `username`. Returns how many were deleted. */
export async function dropMappingsOf(
  paths: StorePaths,
  mutation: Mutation,
  username: string,
): Promise<number> {
  const { mappings } = await readOAuthMap(paths)
  const kept = mappings.filter((mapping) => mapping.username !== username)
  if (kept.length !== mappings.length) await writeMappings(paths, mutation, kept)
  return mappings.length - kept.length
}

/**
 * Under the lock: adds (issuer, subject) → username. The same mapping again is a no-op; the pair
 * mapped to another username is `ERR_CREDENTIALS_EXISTS`; more than 1024 is `ERR_CREDENTIALS_LIMIT`.
 * The caller checks that `username` exists.
 */
export async function addMapping(
  paths: StorePaths,
  mutation: Mutation,
  mapping: OAuthMapping,
): Promise<OAuthMapping> {
  const { mappings } = await readOAuthMap(paths)
  const same = mappings.find((m) => m.issuer === mapping.issuer && m.subject === mapping.subject)
  if (same?.username === mapping.username) return { ...same }
  if (same !== undefined) {
    throw new CredentialError(
      'ERR_CREDENTIALS_EXISTS',
      `this issuer and subject are already mapped to ${same.username}; unmap them first`,
    )
  }
  if (mappings.length >= MAX_OAUTH_MAPPINGS) {
    throw new CredentialError(
      'ERR_CREDENTIALS_LIMIT',
      `at most ${MAX_OAUTH_MAPPINGS} OAuth mappings may exist`,
    )
  }
  await writeMappings(paths, mutation, [...mappings, mapping])
  return { ...mapping }
}

/** Under the lock: deletes the mapping of (issuer, subject), `ERR_CREDENTIALS_NOT_FOUND` if absent. */
export async function deleteMapping(paths: StorePaths, mutation: Mutation, issuer: string, subject: string) {
  const { mappings } = await readOAuthMap(paths)
  const kept = mappings.filter((m) => !(m.issuer === issuer && m.subject === subject))
  if (kept.length === mappings.length) {
    throw new CredentialError('ERR_CREDENTIALS_NOT_FOUND', 'no mapping for this issuer and subject')
  }
  await writeMappings(paths, mutation, kept)
}
