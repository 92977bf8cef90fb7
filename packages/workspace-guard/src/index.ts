/**
 * `@agentgate/workspace-guard`: reads and searches that traversal, symlinks, races and secret
 * files cannot trick out of a workspace root.
 */

/** The error `read` and `search` throw, with a stable `code` and a fixed message per code. */
export { GuardError, type GuardErrorCode } from './errors.ts'
/** Public types: options, results, and the shape of a search match. */
export type {
  CheckResult,
  ReadResult,
  SearchMatch,
  SearchMode,
  SearchOptions,
  SearchResult,
  SymbolKind,
  WorkspaceGuard,
  WorkspaceGuardOptions,
} from './types.ts'
/** Creates a guard for one workspace root (see the function's own documentation). */
export { createWorkspaceGuard } from './workspace-guard.ts'
