import type { GuardErrorCode } from './errors.ts'

/** Result of {@link WorkspaceGuard.check}: the normalised relative path, or why it is refused. */
export type CheckResult =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly code: GuardErrorCode; readonly message: string }

/**
 * What a tool wants to do with a path (see {@link WorkspaceGuard.inspect}): `read` a file or a
 * directory's entries, `list` a directory, `write` (create, replace or edit) a file.
 */
export type TargetAccess = 'read' | 'list' | 'write'

/**
 * Result of {@link WorkspaceGuard.inspect}: the canonical target a tool must use, or why the path
 * is refused (same fixed codes and messages as `read`; never a path).
 */
export type InspectResult =
  | {
      readonly ok: true
      /** Canonical path relative to the root (`''` for the root itself). */
      readonly path: string
      /** Canonical absolute path: hand THIS to the tool, not the path it was given. */
      readonly absolute: string
      /** `missing` only for `write`: the file does not exist yet. */
      readonly kind: 'file' | 'directory' | 'missing'
    }
  | { readonly ok: false; readonly code: GuardErrorCode; readonly message: string }

/** Options of `createWorkspaceGuard`; validated once, when the guard is created. */
export interface WorkspaceGuardOptions {
  /** Absolute path of an existing directory; canonicalised once (realpath) at creation. */
  root: string
  /** Largest file `read` returns and content search looks at, in bytes. Default 256 KiB. */
  maxBytes?: number
  /**
   * Search engine. Absolute path of a ripgrep binary; `false` forces the built-in Node engine;
   * default: `rg` found on `PATH`, otherwise the built-in engine. Both give the same guarantees.
   */
  ripgrepPath?: string | false
  /** Wall-clock budget of one search in milliseconds; past it the search returns `truncated: true`. Default 10 000. */
  timeBudgetMs?: number
  /** Most files one search lists or scans; past it the search returns `truncated: true`. Default 100 000. */
  fileBudget?: number
  /**
   * Directory or file names (exact, case-sensitive) that search never descends into. Does not
   * affect `read`. Default `['node_modules']`; pass `[]` to search everything allowed.
   */
  exclude?: readonly string[]
  /** Clock used for the time budget (milliseconds). Default `performance.now`. */
  now?: () => number
}

/** Result of {@link WorkspaceGuard.read}. */
export interface ReadResult {
  /** The normalised relative path that was asked for. */
  readonly path: string
  /** The whole file, decoded as UTF-8 (a leading BOM removed). */
  readonly text: string
  /** Media type guessed from the file name, `text/plain` when unknown. */
  readonly mimeType: string
  /** Always false: a file over the limit is refused, never cut. */
  readonly truncated: false
}

/** The three search modes. */
export type SearchMode = 'files' | 'text' | 'symbols'

/** Options of {@link WorkspaceGuard.search}. */
export interface SearchOptions {
  /** `files`: paths; `text`: lines containing the literal query; `symbols`: definitions by name. */
  mode: SearchMode
  /**
   * 1-500 characters, no control characters. `files`: case-insensitive substring of the relative
   * path, or a glob when it contains `*` or `?` (`*`/`?` stay within one component, `**` spans
   * components; a glob without `/` matches the file name). `text`: a literal string, never a
   * regular expression or a flag. `symbols`: case-insensitive substring of the symbol name.
   */
  query: string
  /** 1-100, default 20. */
  limit?: number
  /** `text` only: match case exactly. Default false (case-insensitive). */
  caseSensitive?: boolean
}

/** Kinds of definitions the `symbols` mode recognises. */
export type SymbolKind =
  | 'function'
  | 'method'
  | 'class'
  | 'interface'
  | 'type'
  | 'enum'
  | 'constant'
  | 'struct'
  | 'trait'
  | 'impl'
  | 'record'

/**
 * One search hit. Always `path` (relative to the root, `/`-separated). `text` adds `line`,
 * `column` (1-based, UTF-16 code units) and `preview` (the trimmed line, at most 200 characters
 * around the match); `symbols` adds `line`, `column` of the name, `kind`, `name` and `preview`
 * (the definition line).
 */
export interface SearchMatch {
  readonly path: string
  readonly line?: number
  readonly column?: number
  readonly preview?: string
  readonly kind?: SymbolKind
  readonly name?: string
}

/** Result of {@link WorkspaceGuard.search}. */
export interface SearchResult {
  readonly matches: SearchMatch[]
  /** True when more matches exist than returned, or a time/file budget stopped the search. */
  readonly truncated: boolean
}

/** A workspace guard: every method is safe to call with untrusted input. */
export interface WorkspaceGuard {
  /** The pure path rules (no I/O). */
  check(path: string): CheckResult
  /**
   * Decides whether another tool may touch `path` (relative to the root; `.` is the root) for
   * `access`, following symlinks to their canonical target, which must stay inside the root and be
   * allowed by the rules; refuses special and hard-linked files, and files over `maxBytes` for
   * `read`. Opens nothing and never throws for untrusted input.
   */
  inspect(path: string, access: TargetAccess): Promise<InspectResult>
  /** Reads one text file under the root. Throws {@link GuardError}. */
  read(path: string): Promise<ReadResult>
  /** Bounded search whose every result passed the same checks as `read`. Throws {@link GuardError}. */
  search(options: SearchOptions): Promise<SearchResult>
}
