/**
 * `@agentgate/workspace-guard`: reads and searches that traversal, symlinks, races and secret
 * files cannot trick out of a workspace root.
 */

/**
 * The deny-list itself, as data: the one source of the secret-file rules, for tools that must
 * derive their own rules from it (the runtime's permission patterns). Compare through
 * `check`/`inspect`, which normalise and match case-insensitively; this data is lower case.
 */
export { DENY_LIST } from './deny-patterns.ts'
/** The error `read` and `search` throw, with a stable `code` and a fixed message per code. */
export { GuardError, type GuardErrorCode } from './errors.ts'
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
/** Creates a guard for one workspace root (see the function's own documentation). */
export { createWorkspaceGuard } from './workspace-guard.ts'
