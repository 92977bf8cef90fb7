/**
 * `@sallyport/workspace-guard`: reads and searches that traversal, symlinks, races and secret
 * files cannot trick out of a workspace root.
 */

/**
 * Longest path `read` and `check` accept (1024 UTF-16 code units). This and the other limits are
 * exported for callers that validate or describe input before it reaches the guard (the
 * gateway's tool schemas and messages).
 */
export { MAX_PATH_LENGTH } from './check-path.ts'
/**
 * The deny-list itself, as data: the one source of the secret-file rules, for tools that must
 * derive their own rules from it (the runtime's permission patterns). Compare through
 * `check`/`inspect`, which normalise and match case-insensitively; this data is lower case.
 */
export { DENY_LIST } from './deny-patterns.ts'
/** The error `read` and `search` throw, with a stable `code` and a fixed message per code. */
export { GuardError, type GuardErrorCode } from './errors.ts'
/** Search limits: the default and largest `limit` (20, 100) and the longest `query` (500 characters). */
export { DEFAULT_SEARCH_LIMIT, MAX_QUERY_LENGTH, MAX_SEARCH_LIMIT } from './search.ts'
/** Public types: options, results, and the shape of a search match. */
export type {
  CheckResult,
  InspectResult,
  ReadResult,
  SearchMatch,
  SearchMode,
  SearchOptions,
  SearchResult,
  SymbolKind,
  TargetAccess,
  WorkspaceGuard,
  WorkspaceGuardOptions,
} from './types.ts'
/** Creates a guard for one workspace root; `DEFAULT_MAX_BYTES` is its default read cap (256 KiB). */
export { createWorkspaceGuard, DEFAULT_MAX_BYTES } from './workspace-guard.ts'
