// Where search candidates come from: the built-in engine (a Node walker and a content pre-filter)
// and the ripgrep engine. Candidates are only a pre-selection.

import type { Dirent } from 'node:fs'
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { isAllowedComponents } from './check-path.ts'
import { containsText } from './find-text.ts'
import { filesContainingArgs, listFilesArgs, runRipgrep } from './ripgrep.ts'
import type { SearchBudget } from './search.ts'

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

/**
 * The built-in engine's walker: relative paths of the regular files under `root`, depth first in
 * name order (deterministic). Symlinks are never followed nor listed (like `rg` without
 * `--follow`), FIFOs, sockets and devices never listed, denied or excluded directories never
 * entered, denied files never yielded. Unreadable directories are skipped.
 */
export async function* walkFiles(root: string, exclude: ReadonlySet<string>): AsyncGenerator<string> {
  const stack: string[][] = [[]]
  while (stack.length > 0) {
    const directory = stack.pop() as string[]
    let entries: Dirent[]
    try {
      entries = await readdir(join(root, ...directory), { withFileTypes: true })
    } catch {
      continue
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const subdirectories: string[][] = []
    for (const entry of entries) {
      if (exclude.has(entry.name)) continue
      const components = [...directory, entry.name]
      if (entry.isDirectory()) {
        if (isAllowedComponents(components, false)) subdirectories.push(components)
      } else if (entry.isFile() && isAllowedComponents(components)) {
        yield components.join('/')
      }
    }
    for (let i = subdirectories.length - 1; i >= 0; i--) stack.push(subdirectories[i] as string[])
  }
}

// Same flags as the real open: a FIFO or a swapped-in symlink is never waited on nor followed.
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY
/** Longest stretch of synchronous reads before the event loop gets a turn. */
const SLICE_MS = 8

function readSmallFile(absolute: string, maxBytes: number): Buffer | undefined {
  let fd: number
  try {
    fd = openSync(absolute, FLAGS)
  } catch {
    return undefined
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile() || stats.size > maxBytes) return undefined
    const buffer = Buffer.allocUnsafe(Math.min(stats.size, maxBytes) + 1)
    let filled = 0
    while (filled < buffer.length) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, filled)
      if (read === 0) break
      filled += read
    }
    return buffer.subarray(0, filled)
  } catch {
    return undefined
  } finally {
    try {
      closeSync(fd)
    } catch {
      // EBADF/EIO on close cannot matter to a pre-selection; the descriptor is gone either way.
    }
  }
}

/**
 * The built-in engine's stand-in for `rg --files-with-matches`: keeps the paths whose content
 * `contains` accepts. It is only a pre-selection (like ripgrep's output): nothing read here is
 * returned; every path it keeps is opened, verified and read again by `scanFile`.
 *
 * It reads synchronously, in slices of at most ~8 ms between event-loop turns: per small file, a
 * thread-pool round trip for each of open, fstat, read and close cost more than the reads
 * themselves (measured ~10x slower on a 50 000-file tree).
 */
export async function* prefilterContent(
  paths: AsyncIterable<string>,
  root: string,
  maxBytes: number,
  contains: (text: string) => boolean,
): AsyncGenerator<string> {
  let sliceStart = performance.now()
  for await (const relative of paths) {
    const bytes = readSmallFile(join(root, relative), maxBytes)
    if (bytes !== undefined && bytes.indexOf(0) === -1 && contains(bytes.toString('utf8'))) yield relative
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldToEventLoop()
      sliceStart = performance.now()
    }
  }
}
