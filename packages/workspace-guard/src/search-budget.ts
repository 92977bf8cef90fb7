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
