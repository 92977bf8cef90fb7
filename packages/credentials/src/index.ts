/**
 * @sallyport/credentials: file-backed named credentials, the gateway's key resolver, OAuth
 * (issuer, subject) mappings and the stack's initial seeding. Node only.
 */

/** Classifies a presented key (missing, malformed, weak) without comparing it. */
export { checkKey, type KeyCheck, type KeyFormatCode } from './check-key.ts'
/** The operator's store: add, set-policy, rotate, remove, list, get and OAuth mappings. */
export {
  type CredentialInfo,
  type CredentialStore,
  type CredentialStoreOptions,
  createCredentialStore,
  type IssuedCredential,
  MAX_CREDENTIALS,
} from './credential-store.ts'
/** The one error class, with `ERR_CREDENTIALS_*` codes. */
export { CredentialError, type CredentialErrorCode } from './errors.ts'
/** Reads and creates the handle secret file used by `@sallyport/handles`. */
export { ensureHandleSecret, HANDLE_SECRET_BYTES, readHandleSecret } from './handle-secret.ts'
/** The pure matcher behind the resolver and its result types. */
export {
  buildKeyIndex,
  type KeyedPrincipal,
  type KeyIndex,
  type Principal,
  type ResolveFailureCode,
  type ResolveResult,
} from './key-matcher.ts'
/** The gateway's hot-reloading key and OAuth-subject resolver. */
export { createKeyResolver, type KeyResolver, type KeyResolverOptions } from './key-resolver.ts'
/** Key and identity generation. */
export { generateIdentity, generateKey, type RandomSource } from './random-values.ts'
/** Policies, key limits, the username rule and the mapping record. */
export {
  KEY_MAX_LENGTH,
  KEY_MIN_LENGTH,
  MAX_OAUTH_MAPPINGS,
  type OAuthMapping,
  POLICIES,
  type Policy,
  USERNAME_PATTERN,
} from './schemas.ts'
/** Creates the spec's initial credentials and the handle secret, idempotently. */
export {
  INITIAL_CREDENTIALS,
  OWNER_USERNAME,
  type SeedResult,
  type SeedStackOptions,
  seedStack,
} from './seed-stack.ts'
export { type StorePaths, storePaths } from './store-paths.ts'
/** Input predicates for CLIs that want to validate before calling the store. */
export { isPolicy, isValidUsername } from './validate-input.ts'
