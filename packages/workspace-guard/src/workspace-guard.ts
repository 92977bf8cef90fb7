import { checkPath } from './check-path.ts'
import { GUARD_MESSAGES, GuardError } from './errors.ts'
import { inspectTarget } from './inspect-target.ts'
import { resolveOptions } from './options.ts'
import { readFile } from './read-file.ts'
import { search } from './search.ts'
import type { TargetAccess, WorkspaceGuard, WorkspaceGuardOptions } from './types.ts'

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
