import type { SearchBudget } from './search-budget.ts'

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
