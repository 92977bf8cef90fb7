import { realpathSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { performance } from 'node:perf_hooks'
import { checkPath } from './check-path.ts'
import { GUARD_MESSAGES, GuardError } from './errors.ts'
import { inspectTarget } from './inspect-target.ts'
import { readFile } from './read-file.ts'
import { findRipgrep } from './ripgrep.ts'
import { search } from './search.ts'
import type { TargetAccess, WorkspaceGuard, WorkspaceGuardOptions } from './types.ts'

/** Default read cap: 256 KiB, the spec's limit for `gateway.workspace.read`. */
export const DEFAULT_MAX_BYTES = 256 * 1024
const MAX_MAX_BYTES = 64 * 1024 * 1024
const DEFAULT_TIME_BUDGET_MS = 10_000
const DEFAULT_FILE_BUDGET = 100_000
const DEFAULT_EXCLUDE: readonly string[] = ['node_modules']

/** Options after validation: the root canonicalised, defaults applied, the engine chosen. */
export interface ResolvedOptions {
  readonly root: string
  readonly maxBytes: number
  readonly ripgrep: string | undefined
  readonly timeBudgetMs: number
  readonly fileBudget: number
  readonly exclude: ReadonlySet<string>
  readonly now: () => number
}

function resolveRoot(root: unknown): string {
  // Messages never repeat the rejected path (house rule: no absolute path in a message).
  if (typeof root !== 'string' || !isAbsolute(root) || root.includes('\0'))
    throw new TypeError('root must be an absolute path')
  let canonical: string
  try {
    canonical = realpathSync(root)
  } catch {
    throw new TypeError('root must be an existing directory')
  }
  if (!statSync(canonical).isDirectory()) throw new TypeError('root must be an existing directory')
  return canonical
}

function integerIn(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}`)
  return value
}

function resolveExclude(exclude: unknown): ReadonlySet<string> {
  if (exclude === undefined) return new Set(DEFAULT_EXCLUDE)
  if (!Array.isArray(exclude)) throw new TypeError('exclude must be an array of names')
  for (const name of exclude) {
    // Plain names only: they are also passed to ripgrep as globs.
    if (
      typeof name !== 'string' ||
      name === '' ||
      name === '.' ||
      name === '..' ||
      /[/\\\0*?[\]{}!]/.test(name)
    )
      throw new TypeError('exclude entries must be plain file or directory names')
  }
  return new Set(exclude as string[])
}

/**
 * Validates the factory options once (house rule: misconfiguration fails at creation with
 * `TypeError`/`RangeError`, not on first use), canonicalises the root and picks the search engine.
 */
export function resolveOptions(options: WorkspaceGuardOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object')
  const now = options.now ?? (() => performance.now())
  if (typeof now !== 'function') throw new TypeError('now must be a function')
  return Object.freeze({
    root: resolveRoot(options.root),
    maxBytes: integerIn(options.maxBytes, 'maxBytes', 1, MAX_MAX_BYTES, DEFAULT_MAX_BYTES),
    ripgrep: findRipgrep(options.ripgrepPath),
    timeBudgetMs: integerIn(options.timeBudgetMs, 'timeBudgetMs', 1, 600_000, DEFAULT_TIME_BUDGET_MS),
    fileBudget: integerIn(options.fileBudget, 'fileBudget', 1, 10_000_000, DEFAULT_FILE_BUDGET),
    exclude: resolveExclude(options.exclude),
    now,
  })
}

const TARGET_ACCESS: ReadonlySet<TargetAccess> = new Set(['read', 'list', 'write'])

/**
 * Creates a guard for one workspace root. Options are validated here, once: a relative, missing
 * or non-directory `root` and an unusable `ripgrepPath` throw `TypeError`, out-of-range numbers
 * `RangeError`. The root is canonicalised (realpath) now; every later check compares with it.
 *
 * @example
 * const guard = createWorkspaceGuard({ root: '/work' })
 * const { text } = await guard.read('src/index.ts')
 * const { matches, truncated } = await guard.search({ mode: 'text', query: 'TODO', limit: 50 })
 */
export function createWorkspaceGuard(options: WorkspaceGuardOptions): WorkspaceGuard {
  const resolved = resolveOptions(options)
  return Object.freeze({
    check: (path: string) => checkPath(path),
    inspect: async (path, access) => {
      if (typeof path !== 'string' || !TARGET_ACCESS.has(access))
        return { ok: false, code: 'ERR_GUARD_INVALID', message: GUARD_MESSAGES.ERR_GUARD_INVALID }
      return inspectTarget(resolved.root, path, access, resolved.maxBytes)
    },
    read: async (path: string) => {
      if (typeof path !== 'string') throw new GuardError('ERR_GUARD_INVALID', 'path must be a string')
      return readFile(resolved.root, path, resolved.maxBytes)
    },
    search: (searchOptions) => search(resolved, searchOptions),
  } satisfies WorkspaceGuard)
}
