import { compareCodeUnits } from './compare-code-units.ts'
import { extractSymbols, languageOf } from './extract-symbols.ts'
import { scanCandidates } from './scan-candidates.ts'
import { scanFile } from './scan-file.ts'
import type { SearchContext } from './search-context.ts'
import type { SearchRequest } from './search-options.ts'
import { SYMBOL_EXTENSIONS } from './symbol-rules.ts'
import type { SearchMatch } from './types.ts'

/** Most definitions collected before ranking; past it the result is marked truncated. */
const MAX_COLLECTED = 10_000

interface RankedSymbol extends SearchMatch {
  readonly rank: number
}

function rankOf(name: string, query: string, folded: string): number | undefined {
  if (name === query) return 0
  const lower = name.toLowerCase()
  if (lower === folded) return 1
  if (lower.startsWith(folded)) return 2
  return lower.includes(folded) ? 3 : undefined
}

/**
 * `symbols`: definitions whose name contains the query (case-insensitive); exact names first,
 * then prefixes, then the rest, each group by path and line. The engine pre-selects files that
 * contain the query at all; definitions come from this package's own read of each file.
 */
export async function searchSymbols(context: SearchContext, request: SearchRequest): Promise<SearchMatch[]> {
  const { root, maxBytes, engine, budget, concurrency } = context
  const { query } = request
  const folded = query.toLowerCase()
  const collected: RankedSymbol[] = []
  const source = engine.filesContaining(query, false, SYMBOL_EXTENSIONS)
  await scanCandidates(
    source.paths,
    budget,
    concurrency,
    (path) => {
      const language = languageOf(path)
      if (language === undefined) return Promise.resolve(undefined)
      return scanFile(root, path, maxBytes, (text) =>
        extractSymbols(text, language).flatMap(({ line, column, kind, name, preview }) => {
          const rank = rankOf(name, query, folded)
          return rank === undefined ? [] : [{ path, line, column, kind, name, preview, rank }]
        }),
      )
    },
    (found) => {
      collected.push(...found)
      return collected.length < MAX_COLLECTED
    },
  )
  if (source.incomplete() || collected.length >= MAX_COLLECTED) budget.markExhausted()
  collected.sort(
    (a, b) => a.rank - b.rank || compareCodeUnits(a.path, b.path) || (a.line ?? 0) - (b.line ?? 0),
  )
  return collected.map(({ rank: _rank, ...match }) => match)
}
