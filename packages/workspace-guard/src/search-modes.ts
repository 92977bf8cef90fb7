// The three search modes over a candidate source: `files`, `text` and `symbols`. Every result
// comes from this package's own verified read of the file, never from the engine.

import { extractSymbols, languageOf } from './extract-symbols.ts'
import { findText } from './find-text.ts'
import { createPathMatcher } from './path-matcher.ts'
import { scanFile } from './scan-file.ts'
import type { SearchBudget, SearchRequest } from './search.ts'
import type { SearchEngine } from './search-engine.ts'
import { SYMBOL_EXTENSIONS } from './symbol-rules.ts'
import type { SearchMatch } from './types.ts'

/** Everything one search needs. */
export interface SearchContext {
  readonly root: string
  readonly maxBytes: number
  readonly engine: SearchEngine
  readonly budget: SearchBudget
  /** Files scanned at the same time. */
  readonly concurrency: number
}

/** String order by UTF-16 code units: the same in every locale, unlike `localeCompare`. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Runs `inspect` over candidate paths with bounded concurrency, in the order they arrive, and
 * hands every non-empty result to `accept`, which returns false once it has enough. Stops pulling
 * candidates when `accept` says so or the time budget is spent (the file budget is counted by the
 * engine that produces the candidates); stopping the iteration also stops its
 * producer (ripgrep is killed, the walker stops reading directories).
 */
export async function scanCandidates<T>(
  candidates: AsyncIterable<string>,
  budget: SearchBudget,
  concurrency: number,
  inspect: (relative: string) => Promise<T[] | undefined>,
  accept: (found: T[]) => boolean,
): Promise<void> {
  const inFlight = new Set<Promise<void>>()
  let wantMore = true
  const start = (relative: string): void => {
    const task = inspect(relative).then((found) => {
      if (found !== undefined && wantMore) wantMore = accept(found)
    })
    const tracked = task.finally(() => inFlight.delete(tracked))
    inFlight.add(tracked)
  }
  for await (const relative of candidates) {
    if (!wantMore || budget.exhausted()) break
    start(relative)
    if (inFlight.size >= concurrency) await Promise.race(inFlight)
  }
  await Promise.all(inFlight)
}

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
