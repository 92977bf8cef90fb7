import type { SearchBudget } from './search-budget.ts'
import type { SearchEngine } from './search-engine.ts'

/** Everything one search needs. */
export interface SearchContext {
  readonly root: string
  readonly maxBytes: number
  readonly engine: SearchEngine
  readonly budget: SearchBudget
  /** Files scanned at the same time. */
  readonly concurrency: number
}
