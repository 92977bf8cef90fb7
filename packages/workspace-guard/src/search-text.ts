import { compareCodeUnits } from './compare-code-units.ts'
import { findText } from './find-text.ts'
import { scanCandidates } from './scan-candidates.ts'
import { scanFile } from './scan-file.ts'
import type { SearchContext } from './search-context.ts'
import type { SearchRequest } from './search-options.ts'
import type { SearchMatch } from './types.ts'

/**
 * `text`: lines containing the literal query. The engine only pre-selects files; lines, columns
 * and previews come from this package's own read of each file through the verified descriptor,
 * so a result can never show content that did not pass the guard.
 */
export async function searchText(context: SearchContext, request: SearchRequest): Promise<SearchMatch[]> {
  const { root, maxBytes, engine, budget, concurrency } = context
  const { query, caseSensitive, limit } = request
  const matches: SearchMatch[] = []
  const source = engine.filesContaining(query, caseSensitive)
  await scanCandidates(
    source.paths,
    budget,
    concurrency,
    (path) =>
      scanFile(root, path, maxBytes, (text) =>
        findText(text, query, caseSensitive, limit + 1).map((hit) => ({ path, ...hit })),
      ),
    (found) => {
      matches.push(...found)
      return matches.length <= limit
    },
  )
  if (source.incomplete()) budget.markExhausted()
  return matches.sort((a, b) => compareCodeUnits(a.path, b.path) || (a.line ?? 0) - (b.line ?? 0))
}
