import { timingSafeEqual } from 'node:crypto'
import { CredentialError } from './errors.ts'
import { buildKeyIndex, digestKey, type KeyedPrincipal } from './key-matcher.ts'
import { addMapping, deleteMapping, dropMappingsOf, sortMappings } from './oauth-map.ts'
import { defaultRandom, generateIdentity, generateKey, type RandomSource } from './random-values.ts'
import { listUsernames, readKey, readMeta, readOAuthMap } from './read-store.ts'
import type { CredentialMeta, OAuthMapping, Policy } from './schemas.ts'
import { type StorePaths, storePaths } from './store-paths.ts'
import { mutate, type WriterOptions } from './store-writer.ts'
import { assertOAuthPair, assertOperatorKey, assertPolicy, assertUsername } from './validate-input.ts'

/** At most this many named credentials (spec limit). */
export const MAX_CREDENTIALS = 128

/** Options of {@link createCredentialStore}. */
export interface CredentialStoreOptions {
  /** The stack's `state/` directory; credentials live in `<stateDir>/credentials/`. */
  readonly stateDir: string
  /** Random bytes for keys and identities (default `crypto.randomBytes`). */
  readonly random?: RandomSource
  /** Clock in epoch milliseconds for timestamps (default `Date.now`). */
  readonly now?: () => number
  /** How long a mutation waits for the store lock (default 15 000 ms). */
  readonly lockTimeoutMs?: number
  /** A lock file untouched for this long is abandoned (default 10 000 ms; holders refresh it). */
  readonly staleLockMs?: number
}

/** A credential as listed: everything but the key. */
export interface CredentialInfo {
  readonly username: string
  readonly identity: string
  readonly policy: Policy
  readonly createdAt: string
  readonly updatedAt: string
  /** When the key was last rotated, `null` if never. */
  readonly rotatedAt: string | null
}

/** Returned once by `add` and `rotate`: the only time a key leaves the store. */
export interface IssuedCredential {
  readonly username: string
  readonly identity: string
  readonly policy: Policy
  readonly key: string
}

/** The operator's view of the store. Every mutation holds the store-wide lock. */
export interface CredentialStore {
  /** Creates a credential with a new identity and a generated (or the given) key. */
  add(username: string, policy: Policy, options?: { key?: string }): Promise<IssuedCredential>
  /** Changes the policy; identity and key stay. */
  setPolicy(username: string, policy: Policy): Promise<CredentialInfo>
  /** Replaces the key (generated, or the given one); identity and policy stay. */
  rotate(username: string, options?: { key?: string }): Promise<IssuedCredential>
  /** Deletes the credential and every OAuth mapping to it. */
  remove(username: string): Promise<CredentialInfo>
  /** Every credential sorted by username, without keys. */
  list(): Promise<CredentialInfo[]>
  /** One credential without its key, or `undefined`. */
  get(username: string): Promise<CredentialInfo | undefined>
  /** Maps the exact (issuer, subject) pair to an existing credential. */
  mapOAuth(issuer: string, subject: string, username: string): Promise<OAuthMapping>
  /** Deletes the mapping of (issuer, subject). */
  unmapOAuth(issuer: string, subject: string): Promise<void>
  /** Every OAuth mapping, sorted by username, issuer, subject. */
  listOAuthMappings(): Promise<OAuthMapping[]>
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback
  if (!Number.isFinite(resolved) || resolved <= 0) throw new RangeError(`${name} must be a positive number`)
  return resolved
}

function info(username: string, meta: CredentialMeta): CredentialInfo {
  const { identity, policy, createdAt, updatedAt, rotatedAt } = meta
  return { username, identity, policy, createdAt, updatedAt, rotatedAt }
}

function notFound(username: string): CredentialError {
  return new CredentialError('ERR_CREDENTIALS_NOT_FOUND', `no credential named ${username}`)
}

function metaJson(meta: CredentialMeta): string {
  return `${JSON.stringify(meta, null, 2)}\n`
}

/**
 * Throws `ERR_CREDENTIALS_KEY_IN_USE` if any other credential already has `key`. Uses the
 * resolver's key index, so "in use" means exactly "would resolve to (or collide with) another".
 */
async function assertKeyUnused(paths: StorePaths, key: string, except?: string): Promise<void> {
  const others: KeyedPrincipal[] = []
  for (const username of await listUsernames(paths)) {
    const other = username === except ? undefined : await readKey(paths, username)
    // Only whether the key matches is asked: identity and policy are placeholders.
    if (other !== undefined) others.push({ username, identity: username, policy: 'read', key: other })
  }
  const match = buildKeyIndex(others).match(key)
  if (match.ok || match.code !== 'ERR_CREDENTIALS_UNKNOWN')
    throw new CredentialError('ERR_CREDENTIALS_KEY_IN_USE', 'key is already used by another credential')
}

/**
 * Opens the file-backed credential store under `stateDir` (created lazily by the first write).
 * Throws `TypeError`/`RangeError` for bad options; operations throw {@link CredentialError}.
 *
 * @example
 * const store = createCredentialStore({ stateDir: 'state' })
 * const { key } = await store.add('ci', 'read') // show `key` once, it is not retrievable later
 */
export function createCredentialStore(options: CredentialStoreOptions): CredentialStore {
  const paths = storePaths(options.stateDir)
  const random = options.random ?? defaultRandom
  const now = options.now ?? Date.now
  if (typeof random !== 'function') throw new TypeError('random must be a function')
  if (typeof now !== 'function') throw new TypeError('now must be a function')
  const writer: WriterOptions = {
    lockTimeoutMs: positive('lockTimeoutMs', options.lockTimeoutMs, 15_000),
    staleLockMs: positive('staleLockMs', options.staleLockMs, 10_000),
  }
  const timestamp = (): string => new Date(now()).toISOString()

  async function requireMeta(username: string): Promise<CredentialMeta> {
    const meta = await readMeta(paths, username)
    if (meta === undefined) throw notFound(username)
    return meta
  }

  return {
    async add(username, policy, addOptions = {}) {
      assertUsername(username)
      assertPolicy(policy)
      if (addOptions.key !== undefined) assertOperatorKey(addOptions.key)
      return mutate(paths, writer, async (mutation) => {
        const existing = await listUsernames(paths)
        if (existing.includes(username)) {
          throw new CredentialError('ERR_CREDENTIALS_EXISTS', `a credential named ${username} already exists`)
        }
        if (existing.length >= MAX_CREDENTIALS) {
          throw new CredentialError(
            'ERR_CREDENTIALS_LIMIT',
            `at most ${MAX_CREDENTIALS} credentials may exist`,
          )
        }
        const key = addOptions.key ?? generateKey(random)
        await assertKeyUnused(paths, key)
        // A mapping to an absent username can only be a leftover of an interrupted remove or a
        // hand edit: it must not grant the new credential (a new identity) to the old subject.
        await dropMappingsOf(paths, mutation, username)
        const at = timestamp()
        const meta: CredentialMeta = {
          version: 1,
          identity: generateIdentity(random),
          policy,
          createdAt: at,
          updatedAt: at,
          rotatedAt: null,
        }
        // Key and metadata appear together: the directory is renamed into place complete.
        await mutation.createDir(paths.userDir(username), { key, 'meta.json': metaJson(meta) })
        return { username, identity: meta.identity, policy, key }
      })
    },

    async setPolicy(username, policy) {
      assertUsername(username)
      assertPolicy(policy)
      const dir = paths.userDir(username)
      return mutate(
        paths,
        writer,
        async (mutation) => {
          const meta = await requireMeta(username)
          const next: CredentialMeta = { ...meta, policy, updatedAt: timestamp() }
          await mutation.writeFile(paths.metaFile(username), metaJson(next))
          return info(username, next)
        },
        [dir],
      )
    },

    async rotate(username, rotateOptions = {}) {
      assertUsername(username)
      if (rotateOptions.key !== undefined) assertOperatorKey(rotateOptions.key)
      return mutate(
        paths,
        writer,
        async (mutation) => {
          const meta = await requireMeta(username)
          const key = rotateOptions.key ?? generateKey(random)
          const old = await readKey(paths, username)
          if (old !== undefined && timingSafeEqual(digestKey(old), digestKey(key))) {
            throw new CredentialError(
              'ERR_CREDENTIALS_INVALID_KEY',
              'invalid key: the new key equals the old one',
            )
          }
          await assertKeyUnused(paths, key, username)
          const at = timestamp()
          // Both are written before either is moved into place (a full disk fails with nothing
          // changed). Key first: a reader between the two renames sees the new key with the old
          // timestamps.
          await mutation.writeFile(paths.keyFile(username), key)
          await mutation.writeFile(
            paths.metaFile(username),
            metaJson({ ...meta, updatedAt: at, rotatedAt: at }),
          )
          return { username, identity: meta.identity, policy: meta.policy, key }
        },
        [paths.userDir(username)],
      )
    },

    async remove(username) {
      assertUsername(username)
      return mutate(paths, writer, async (mutation) => {
        const meta = await requireMeta(username)
        // Mappings go first: an interruption then leaves a credential without mappings
        // (fails closed) rather than mappings that a later re-add would inherit.
        await dropMappingsOf(paths, mutation, username)
        mutation.removeDir(paths.userDir(username))
        return info(username, meta)
      })
    },

    async list() {
      const result: CredentialInfo[] = []
      for (const username of await listUsernames(paths)) {
        const meta = await readMeta(paths, username)
        if (meta !== undefined) result.push(info(username, meta))
      }
      return result
    },

    async get(username) {
      assertUsername(username)
      const meta = await readMeta(paths, username)
      return meta === undefined ? undefined : info(username, meta)
    },

    async mapOAuth(issuer, subject, username) {
      assertOAuthPair(issuer, subject)
      assertUsername(username)
      return mutate(paths, writer, async (mutation) => {
        await requireMeta(username)
        return addMapping(paths, mutation, { issuer, subject, username })
      })
    },

    async unmapOAuth(issuer, subject) {
      assertOAuthPair(issuer, subject)
      await mutate(paths, writer, (mutation) => deleteMapping(paths, mutation, issuer, subject))
    },

    async listOAuthMappings() {
      const map = await readOAuthMap(paths)
      return sortMappings(map.mappings)
    },
  }
}
