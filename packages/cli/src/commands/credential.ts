import {
  type CredentialInfo,
  type CredentialStore,
  createCredentialStore,
  type IssuedCredential,
  isPolicy,
  type Policy,
} from '@sallyport/credentials'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { requireStack } from '../stack/require-stack.ts'

/** Options shared by every `credential` command. */
export interface CredentialCommandOptions {
  readonly dir: string
  readonly json?: boolean
}

async function storeFor(dir: string): Promise<CredentialStore> {
  const layout = await requireStack(dir)
  return createCredentialStore({ stateDir: layout.stateDir })
}

function policyOf(value: string): Policy {
  if (!isPolicy(value))
    throw new CliError(
      'ERR_CLI_USAGE',
      `policy must be chat, read or full (got ${JSON.stringify(value.slice(0, 20))})`,
    )
  return value
}

function printIssued(io: Io, issued: IssuedCredential, json: boolean | undefined, verb: string): void {
  if (json) {
    io.out(`${JSON.stringify({ username: issued.username, policy: issued.policy, key: issued.key })}\n`)
  } else {
    // The key goes to stdout only, once; the hint goes to stderr so `key=$(…)` captures the key alone.
    io.out(`${issued.key}\n`)
    io.err(
      `${verb} ${issued.username} (policy ${issued.policy}). The key above is shown once; store it now.\n`,
    )
  }
}

/**
 * Creates a credential in the stack at `dir` and returns it with its key: the one code path of
 * `credential add` and `connect --credential`. Throws `ERR_CLI_USAGE` for an unknown policy and
 * the store's errors (`ERR_CREDENTIALS_EXISTS` when the name is taken, exit 5).
 */
export async function addCredential(
  dir: string,
  username: string,
  policy: string,
): Promise<IssuedCredential> {
  return (await storeFor(dir)).add(username, policyOf(policy))
}

/** `sallyport credential add <username> <policy>`: creates a credential and prints its key once. */
export async function credentialAdd(
  options: CredentialCommandOptions & { username: string; policy: string },
  io: Io,
): Promise<void> {
  const issued = await addCredential(options.dir, options.username, options.policy)
  printIssued(io, issued, options.json, 'Added')
}

/** `sallyport credential set-policy <username> <policy>`: identity, key and sessions stay. */
export async function credentialSetPolicy(
  options: CredentialCommandOptions & { username: string; policy: string },
  io: Io,
): Promise<void> {
  const info = await (await storeFor(options.dir)).setPolicy(options.username, policyOf(options.policy))
  if (options.json) io.out(`${JSON.stringify(publicInfo(info))}\n`)
  else io.out(`${info.username}: policy ${info.policy}\n`)
}

/** `sallyport credential rotate <username>`: a new key, same identity and sessions; prints it once. */
export async function credentialRotate(
  options: CredentialCommandOptions & { username: string },
  io: Io,
): Promise<void> {
  const issued = await (await storeFor(options.dir)).rotate(options.username)
  printIssued(io, issued, options.json, 'Rotated')
}

/** `sallyport credential remove <username>`: deletes it and its OAuth mappings; its sessions stay unreachable. */
export async function credentialRemove(
  options: CredentialCommandOptions & { username: string },
  io: Io,
): Promise<void> {
  const info = await (await storeFor(options.dir)).remove(options.username)
  if (options.json) io.out(`${JSON.stringify({ removed: info.username })}\n`)
  else io.out(`removed ${info.username}\n`)
}

/** `sallyport credential list`: every credential without its key. */
export async function credentialList(options: CredentialCommandOptions, io: Io): Promise<void> {
  const store = await storeFor(options.dir)
  const [credentials, mappings] = await Promise.all([store.list(), store.listOAuthMappings()])
  if (options.json) {
    io.out(`${JSON.stringify({ credentials: credentials.map(publicInfo), oauthMappings: mappings })}\n`)
    return
  }
  if (credentials.length === 0) {
    io.out('no credentials\n')
    return
  }
  const width = Math.max(8, ...credentials.map((c) => c.username.length))
  io.out(`${'USERNAME'.padEnd(width)}  POLICY  CREATED                   ROTATED\n`)
  for (const c of credentials) {
    io.out(
      `${c.username.padEnd(width)}  ${c.policy.padEnd(6)}  ${c.createdAt.padEnd(24)}  ${c.rotatedAt ?? '-'}\n`,
    )
  }
  for (const m of mappings) io.out(`oauth ${m.issuer} ${m.subject} -> ${m.username}\n`)
}

/** `sallyport credential map oauth <issuer> <subject> <username>`. */
export async function credentialMapOAuth(
  options: CredentialCommandOptions & { issuer: string; subject: string; username: string },
  io: Io,
): Promise<void> {
  const mapping = await (await storeFor(options.dir)).mapOAuth(
    options.issuer,
    options.subject,
    options.username,
  )
  if (options.json) io.out(`${JSON.stringify(mapping)}\n`)
  else io.out(`mapped ${mapping.issuer} ${mapping.subject} -> ${mapping.username}\n`)
}

function publicInfo(info: CredentialInfo) {
  return {
    username: info.username,
    policy: info.policy,
    createdAt: info.createdAt,
    updatedAt: info.updatedAt,
    rotatedAt: info.rotatedAt,
  }
}
