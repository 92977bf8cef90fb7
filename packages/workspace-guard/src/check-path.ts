import { isUnsafeComponent } from './component-key.ts'
import { isDeniedPath } from './deny-rules.ts'
import { GUARD_MESSAGES } from './errors.ts'
import type { CheckResult } from './types.ts'

/** Longest accepted path, in UTF-16 code units (the gateway's `path` input is 1-1024). */
export const MAX_PATH_LENGTH = 1024

const REFUSED: CheckResult = Object.freeze({
  ok: false,
  code: 'ERR_GUARD_DENIED',
  message: GUARD_MESSAGES.ERR_GUARD_DENIED,
})

/**
 * Splits a relative path into components, dropping empty and `.` ones. Returns undefined when the
 * path is refused by shape: not a non-empty string, too long, absolute, containing NUL, a
 * backslash, a `..` or otherwise unsafe component.
 */
export function splitRelativePath(path: unknown): string[] | undefined {
  if (typeof path !== 'string' || path.length === 0 || path.length > MAX_PATH_LENGTH) return undefined
  // Checked on the whole string first so that no later split can hide them.
  if (path.startsWith('/') || path.includes('\\') || path.includes('\0')) return undefined
  const components: string[] = []
  for (const component of path.split('/')) {
    if (component === '' || component === '.') continue
    if (component === '..' || isUnsafeComponent(component)) return undefined
    components.push(component)
  }
  return components.length > 0 ? components : undefined
}

/**
 * The pure path rules: no I/O, same answer for every root. Refused paths all get the same code
 * and message, whatever the reason. On success `path` is the normalised relative path
 * (`./a//b/` → `a/b`), the only form the rest of the package works with.
 */
export function checkPath(path: unknown): CheckResult {
  const components = splitRelativePath(path)
  if (components === undefined || isDeniedPath(components)) return REFUSED
  return { ok: true, path: components.join('/') }
}

/**
 * The same rules applied to components read back from the file system (a canonical path, the
 * target of an opened descriptor, a walked directory entry): refused when any component is unsafe
 * or the path is denied. An empty list (the root itself) is refused: it is not a file.
 * `lastIsFile: false` checks a directory (see `isDeniedPath`).
 */
export function isAllowedComponents(components: readonly string[], lastIsFile = true): boolean {
  if (components.length === 0) return false
  for (const component of components) {
    if (component === '' || component === '.' || component === '..' || isUnsafeComponent(component))
      return false
  }
  return !isDeniedPath(components, lastIsFile)
}
