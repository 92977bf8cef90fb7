import { createCredentialStore, type IssuedCredential } from './credential-store.ts'
import { CredentialError } from './errors.ts'
import { ensureHandleSecret } from './handle-secret.ts'
import type { RandomSource } from './random-values.ts'
import type { Policy } from './schemas.ts'

/** The stack owner's credential: the one `full` credential `init` creates. */
export const OWNER_USERNAME = 'owner'

/** The spec's initial credentials. */
export const INITIAL_CREDENTIALS: readonly { readonly username: string; readonly policy: Policy }[] = [
  { username: OWNER_USERNAME, policy: 'full' },
  { username: 'discord', policy: 'chat' },
  { username: 'slack', policy: 'chat' },
]

/** Options of {@link seedStack}. */
export interface SeedStackOptions {
  readonly stateDir: string
  readonly random?: RandomSource
  readonly now?: () => number
}

/** What {@link seedStack} created; empty on a second run. */
export interface SeedResult {
  /** Credentials created now, with their keys (shown once). */
  readonly credentials: IssuedCredential[]
  /** True if `handle-secret` was created now. */
  readonly handleSecretCreated: boolean
}

/**
 * Creates the initial credentials (owner: full, discord: chat, slack: chat) and
 * `<stateDir>/handle-secret` where they are missing. Idempotent: existing credentials (whatever
 * their policy) and an existing secret are never changed. Throws {@link CredentialError}.
 */
export async function seedStack(options: SeedStackOptions): Promise<SeedResult> {
  const store = createCredentialStore(options)
  const credentials: IssuedCredential[] = []
  for (const { username, policy } of INITIAL_CREDENTIALS) {
    try {
      credentials.push(await store.add(username, policy))
    } catch (error) {
      // Present already (possibly added by a concurrent seed): leave it as it is.
      if (!(CredentialError.isInstance(error) && error.code === 'ERR_CREDENTIALS_EXISTS')) throw error
    }
  }
  const handleSecretCreated = await ensureHandleSecret(options.stateDir, options.random)
  return { credentials, handleSecretCreated }
}
