import { prefilterContent } from './content-prefilter.ts'
import { containsText } from './find-text.ts'
import { filesContainingArgs, listFilesArgs } from './ripgrep-args.ts'
import { runRipgrep } from './ripgrep-process.ts'
import type { SearchBudget } from './search-budget.ts'
import { walkFiles } from './walk-files.ts'

/** Candidate paths for one search, and whether the source itself was cut short. */
export interface CandidateSource {
  readonly paths: AsyncIterable<string>
  /** True when the source stopped early on its own (ripgrep killed at the deadline). */
  incomplete(): boolean
}

/**
 * Where candidates come from. Candidates are only a pre-selection: every one of them still goes
 * through the rules and the safe open before anything about it is returned.
 */
export interface SearchEngine {
  /** Every allowed regular file under the root. */
  listFiles(): CandidateSource
  /** Files that may contain `query` (a superset is fine), optionally only with these extensions. */
  filesContaining(query: string, caseSensitive: boolean, extensions?: readonly string[]): CandidateSource
}

/** What an engine needs to know about the guard. */
export interface EngineContext {
  readonly root: string
  readonly maxBytes: number
  readonly exclude: ReadonlySet<string>
  readonly budget: SearchBudget
}

function hasExtension(relative: string, extensions: readonly string[] | undefined): boolean {
  if (extensions === undefined) return true
  const lower = relative.toLowerCase()
  return extensions.some((extension) => lower.endsWith(extension))
}

async function* filterExtensions(
  paths: AsyncIterable<string>,
  extensions?: readonly string[],
): AsyncGenerator<string> {
  for await (const path of paths) if (hasExtension(path, extensions)) yield path
}

/** Stops a listing when the budget is spent: counts every file it passes on. */
async function* withinBudget(paths: AsyncIterable<string>, budget: SearchBudget): AsyncGenerator<string> {
  for await (const path of paths) {
    if (budget.exhausted() || !budget.takeFile()) return
    yield path
  }
}

/**
 * The built-in engine: the Node walker, and a content pre-filter that applies the same literal
 * match as the final scan (`findText`), so that it keeps exactly the files that can match.
 */
export function createBuiltinEngine(context: EngineContext): SearchEngine {
  const { root, maxBytes, exclude, budget } = context
  const complete = (): boolean => false
  const walk = (): AsyncGenerator<string> => withinBudget(walkFiles(root, exclude), budget)
  return {
    listFiles: () => ({ paths: walk(), incomplete: complete }),
    filesContaining: (query, caseSensitive, extensions) => ({
      paths: prefilterContent(filterExtensions(walk(), extensions), root, maxBytes, (text) =>
        containsText(text, query, caseSensitive),
      ),
      incomplete: complete,
    }),
  }
}

/**
 * The ripgrep engine. If ripgrep cannot be started (removed since the guard was created), the
 * run falls back to the built-in walker instead of returning nothing.
 */
export function createRipgrepEngine(binary: string, context: EngineContext): SearchEngine {
  const builtin = createBuiltinEngine(context)
  const source = (args: string[], fallback: () => CandidateSource): CandidateSource => {
    const run = runRipgrep(binary, context.root, args, Math.max(1, context.budget.remainingMs()))
    async function* paths(): AsyncGenerator<string> {
      let any = false
      for await (const path of run.paths) {
        any = true
        yield path
      }
      if (run.failed() && !any) yield* fallback().paths
    }
    return { paths: paths(), incomplete: () => run.timedOut() }
  }
  return {
    listFiles: () => {
      // The fallback is the bare walker: the budget below counts every file once, whichever
      // source it came from (the built-in listFiles would count each one a second time).
      const run = source(listFilesArgs(context.maxBytes, context.exclude), () => ({
        paths: walkFiles(context.root, context.exclude),
        incomplete: () => false,
      }))
      return { paths: withinBudget(run.paths, context.budget), incomplete: run.incomplete }
    },
    // Extensions are filtered here rather than with `--glob`s: positive globs slow ripgrep's
    // walk down more than scanning the few extra files costs.
    filesContaining: (query, caseSensitive, extensions) => {
      // ripgrep reads the files itself, so the file budget cannot count them: this run is
      // bounded by the time budget (ripgrep is killed at the deadline).
      const run = source(filesContainingArgs(query, caseSensitive, context.maxBytes, context.exclude), () =>
        builtin.filesContaining(query, caseSensitive),
      )
      return { paths: filterExtensions(run.paths, extensions), incomplete: run.incomplete }
    },
  }
}
