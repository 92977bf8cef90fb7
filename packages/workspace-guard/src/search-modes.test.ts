import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSearchBudget } from './search.ts'
import type { CandidateSource } from './search-engine.ts'
import { type SearchContext, searchFiles } from './search-modes.ts'

let root: string
const NAMES = Array.from({ length: 20 }, (_, i) => `src/file${i}.ts`)
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'search-files-')))
  mkdirSync(join(root, 'src'))
  for (const name of NAMES) writeFileSync(join(root, name), 'x\n')
  writeFileSync(join(root, '.env'), 'SECRET=1\n')
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

/**
 * A context whose engine lists `paths`. Its clock stands still while the listing runs and,
 * with `expireAfterListing`, jumps past the deadline once the last path was handed out.
 */
function contextFor(paths: readonly string[], expireAfterListing: boolean): SearchContext {
  let listed = false
  const budget = createSearchBudget(() => (expireAfterListing && listed ? 5_000 : 0), 1_000, 1_000_000)
  const listFiles = (): CandidateSource => ({
    paths: (async function* () {
      yield* paths
      listed = true
    })(),
    incomplete: () => false,
  })
  return {
    root,
    maxBytes: 1_000_000,
    budget,
    concurrency: 2,
    engine: { listFiles, filesContaining: listFiles },
  }
}

describe('searchFiles', () => {
  it('stops verifying candidates once the time budget is spent, and marks the search cut short', async () => {
    const context = contextFor(NAMES, true)
    const matches = await searchFiles(context, {
      mode: 'files',
      query: 'file',
      limit: 100,
      caseSensitive: false,
    })
    expect(matches).toEqual([])
    expect(context.budget.wasExhausted).toBe(true)
  })

  it('still refuses denied paths an engine lists (the rule check is scanFile’s)', async () => {
    const context = contextFor(['.env', ...NAMES.slice(0, 2)], false)
    const matches = await searchFiles(context, {
      mode: 'files',
      query: 'e',
      limit: 100,
      caseSensitive: false,
    })
    expect(matches.map((match) => match.path).sort()).toEqual(NAMES.slice(0, 2).sort())
  })
})
