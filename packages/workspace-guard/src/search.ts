// `search`: its options and their limits, the time and file budget of one run, and the choice of
// engine and mode.

import { GuardError } from './errors.ts'
import { createBuiltinEngine, createRipgrepEngine } from './search-engine.ts'
import { type SearchContext, searchFiles, searchSymbols, searchText } from './search-modes.ts'
import type { SearchMode, SearchResult } from './types.ts'
import type { ResolvedOptions } from './workspace-guard.ts'

// ripgrep already narrowed the candidates to files with a match; the built-in engine scans
// every file, so more reads in flight keep the thread pool busy.
const RIPGREP_CONCURRENCY = 8
const BUILTIN_CONCURRENCY = 32

/** `search`: validate, pick the engine, run the mode, cut to `limit`. */
export async function search(options: ResolvedOptions, input: unknown): Promise<SearchResult> {
  const request = validateSearchOptions(input)
  const budget = createSearchBudget(options.now, options.timeBudgetMs, options.fileBudget)
  const engineContext = { root: options.root, maxBytes: options.maxBytes, exclude: options.exclude, budget }
  const context: SearchContext = {
    root: options.root,
    maxBytes: options.maxBytes,
    budget,
    engine:
      options.ripgrep === undefined
        ? createBuiltinEngine(engineContext)
        : createRipgrepEngine(options.ripgrep, engineContext),
    concurrency: options.ripgrep === undefined ? BUILTIN_CONCURRENCY : RIPGREP_CONCURRENCY,
  }
  const run = { files: searchFiles, text: searchText, symbols: searchSymbols }[request.mode]
  const matches = await run(context, request)
  return {
    matches: matches.slice(0, request.limit),
    truncated: matches.length > request.limit || budget.wasExhausted,
  }
}

/** `limit` of a search when none is given (the gateway's `gateway.workspace.search` default). */
export const DEFAULT_SEARCH_LIMIT = 20
/** Largest `limit` of a search. */
export const MAX_SEARCH_LIMIT = 100
/** Longest `query`, in characters. */
export const MAX_QUERY_LENGTH = 500

/** Search options after validation. */
export interface SearchRequest {
  readonly mode: SearchMode
  readonly query: string
  readonly limit: number
  readonly caseSensitive: boolean
}

const MODES: ReadonlySet<string> = new Set(['files', 'text', 'symbols'])

function invalid(message: string): GuardError {
  // Messages name the option, never echo the value.
  return new GuardError('ERR_GUARD_INVALID', message)
}

/** Validates `search` options; throws `ERR_GUARD_INVALID`. */
export function validateSearchOptions(input: unknown): SearchRequest {
  if (typeof input !== 'object' || input === null) throw invalid('search options must be an object')
  const { mode, query, limit, caseSensitive } = input as Record<string, unknown>
  if (typeof mode !== 'string' || !MODES.has(mode)) throw invalid('mode must be files, text or symbols')
  if (typeof query !== 'string' || query.length === 0 || query.length > MAX_QUERY_LENGTH)
    throw invalid(`query must be 1 to ${MAX_QUERY_LENGTH} characters`)
  // Control characters (newlines, NUL) cannot be a literal line match and cannot be an argument.
  if (/\p{Cc}/u.test(query)) throw invalid('query must not contain control characters')
  if (/[\ud800-\udfff]/u.test(query)) throw invalid('query must be well-formed Unicode')
  if (
    limit !== undefined &&
    (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
  )
    throw invalid(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`)
  if (caseSensitive !== undefined && typeof caseSensitive !== 'boolean')
    throw invalid('caseSensitive must be a boolean')
  return {
    mode: mode as SearchMode,
    query,
    limit: limit ?? DEFAULT_SEARCH_LIMIT,
    caseSensitive: caseSensitive ?? false,
  }
}

/**
 * The time and file budget of one search. Once either is spent the search stops pulling
 * candidates and reports `truncated: true`; nothing here throws.
 */
export interface SearchBudget {
  /** Milliseconds left before the deadline (never negative). */
  remainingMs(): number
  /** True once the deadline passed or the file budget was spent (and records it). */
  exhausted(): boolean
  /** Counts one more file; false (and exhausted from now on) when the budget is spent. */
  takeFile(): boolean
  /** Marks the search as cut short by something else (ripgrep killed at the deadline). */
  markExhausted(): void
  /** True when any budget stopped the search. */
  readonly wasExhausted: boolean
}

/** A budget starting now. */
export function createSearchBudget(
  now: () => number,
  timeBudgetMs: number,
  fileBudget: number,
): SearchBudget {
  const deadline = now() + timeBudgetMs
  let files = 0
  let spent = false
  return {
    remainingMs: () => Math.max(0, deadline - now()),
    exhausted() {
      if (!spent && now() >= deadline) spent = true
      return spent
    },
    takeFile() {
      if (spent) return false
      files += 1
      if (files > fileBudget) spent = true
      return !spent
    },
    markExhausted() {
      spent = true
    },
    get wasExhausted() {
      return spent
    },
  }
}
