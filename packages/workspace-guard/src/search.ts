import type { ResolvedOptions } from './options.ts'
import { createSearchBudget } from './search-budget.ts'
import type { SearchContext } from './search-context.ts'
import { createBuiltinEngine, createRipgrepEngine } from './search-engine.ts'
import { searchFiles } from './search-files.ts'
import { validateSearchOptions } from './search-options.ts'
import { searchSymbols } from './search-symbols.ts'
import { searchText } from './search-text.ts'
import type { SearchResult } from './types.ts'

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
