// Where a path really is: its canonical form (every symlink followed) and whether that lies
// inside the root.

import type { Stats } from 'node:fs'
import { lstat, realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { isAllowedComponents } from './check-path.ts'
import { denied, GuardError } from './errors.ts'

/**
 * Components of `absolute` relative to `root` when `absolute` is `root` or lies below it, else
 * undefined. Both must be canonical (no symlinks, no `.`/`..`); the comparison is textual on
 * whole components, so `/work-other` is not inside `/work`.
 */
export function componentsInsideRoot(root: string, absolute: string): string[] | undefined {
  if (absolute === root) return []
  const prefix = root.endsWith('/') ? root : `${root}/`
  if (!absolute.startsWith(prefix)) return undefined
  const components = absolute.slice(prefix.length).split('/')
  // A canonical path never has these; refuse rather than trust a surprising kernel answer.
  if (components.some((c) => c === '' || c === '.' || c === '..')) return undefined
  return components
}

/**
 * Why a path that does not resolve is reported as missing or denied: walking it component by
 * component, a missing component reached without crossing a symlink is inside the root, so "not
 * found" is honest; past a symlink the missing part may be outside the root, and saying "not
 * found" there would reveal what exists outside. So that case is denied.
 */
export async function missingOrDenied(root: string, components: readonly string[]): Promise<GuardError> {
  let current = root
  for (const component of components) {
    current = join(current, component)
    try {
      if ((await lstat(current)).isSymbolicLink()) return denied()
    } catch {
      return new GuardError('ERR_GUARD_NOT_FOUND')
    }
  }
  // Everything exists after all (created meanwhile): do not guess.
  return denied()
}

/**
 * Resolves a checked relative path to its canonical absolute path (every symlink followed) and
 * re-applies the rules to the canonical form: it must be inside the root and allowed, so a
 * symlink `notes.txt → .env` or `docs → /etc` is denied exactly like the target's own name.
 * A directory is "not found"; anything else that is not a regular file is denied.
 */
export async function canonicalise(root: string, components: readonly string[]): Promise<string> {
  let canonical: string
  try {
    canonical = await realpath(join(root, ...components))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw await missingOrDenied(root, components)
    throw denied() // ELOOP, EACCES, ENAMETOOLONG: nothing to say
  }
  const inside = componentsInsideRoot(root, canonical)
  if (inside === undefined || !isAllowedComponents(inside)) throw denied()
  // Refuse special files before opening them: opening a device can have side effects (a tape
  // rewinds, a watchdog arms), opening a FIFO releases a writer waiting for a reader. The
  // descriptor's own fstat still decides after the open, in case this changed in between.
  let stats: Stats
  try {
    stats = await lstat(canonical)
  } catch {
    throw denied()
  }
  if (stats.isDirectory()) throw new GuardError('ERR_GUARD_NOT_FOUND')
  if (!stats.isFile()) throw denied()
  return canonical
}
