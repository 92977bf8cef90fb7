import type { Policy } from '@sallyport/policy'

/** The authenticated caller: a named credential. `identity` is the opaque internal identity handles bind to. */
export interface Principal {
  readonly username: string
  readonly identity: string
  readonly policy: Policy
}

/** What the gateway needs of `@sallyport/credentials`' key resolver. */
export interface KeyResolverLike {
  resolve(key: string | undefined): Promise<{ ok: true; principal: Principal } | { ok: false; code: string }>
  resolveOAuth(issuer: string, subject: string): Promise<Principal | undefined>
}
