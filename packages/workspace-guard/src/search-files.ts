import { compareCodeUnits } from './compare-code-units.ts'
import { createPathMatcher } from './path-matcher.ts'
import { scanFile } from './scan-file.ts'
import type { SearchContext } from './search-context.ts'
import type { SearchRequest } from './search-options.ts'
import type { SearchMatch } from './types.ts'

interface Ranked {
  readonly path: string
  readonly rank: number
}

function byRank(a: Ranked, b: Ranked): number {
  return a.rank - b.rank || a.path.length - b.path.length || compareCodeUnits(a.path, b.path)
}

/**
 * `files`: every allowed file whose path matches, best ranked first (exact name, name prefix,
 * name substring, path substring; then shorter paths). Only files that `read` would return are
 * listed: each one, in rank order, is opened and checked like a read until `limit + 1` passed.
 */
export async function searchFiles(context: SearchContext, request: SearchRequest): Promise<SearchMatch[]> {
  const { root, maxBytes, engine, budget, concurrency } = context
  const matcher = createPathMatcher(request.query)
  const ranked: Ranked[] = []
  const source = engine.listFiles()
  for await (const path of source.paths) {
    if (budget.exhausted()) break
    const rank = matcher(path)
    // No rule check here: scanFile applies the same one (and the walker already did).
    if (rank !== undefined) ranked.push({ path, rank })
  }
  if (source.incomplete()) budget.markExhausted()
  ranked.sort(byRank)
  const matches: SearchMatch[] = []
  // The verification opens files too: it stops at the deadline like the listing (and the
  // search then says truncated).
  for (
    let start = 0;
    start < ranked.length && matches.length <= request.limit && !budget.exhausted();
    start += concurrency
  ) {
    const batch = ranked.slice(start, start + concurrency)
    const verified = await Promise.all(
      batch.map(({ path }) => scanFile(root, path, maxBytes, () => [{ path }])),
    )
    for (const found of verified) if (found !== undefined) matches.push(...found)
  }
  return matches
}
