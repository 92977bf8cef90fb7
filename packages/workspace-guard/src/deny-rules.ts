import { componentKey } from './component-key.ts'
import {
  ALLOWED_NAMES,
  CREDENTIAL_DIRECTORIES,
  DENIED_FILE_NAMES,
  DENIED_NAME_PATTERNS,
  DENIED_NAMES,
  DENIED_PAIRS,
  DENIED_SUBSTRINGS,
  DENIED_SUFFIXES,
  VCS_DIRECTORIES,
} from './deny-patterns.ts'

const EXACT = new Set([...VCS_DIRECTORIES, ...CREDENTIAL_DIRECTORIES, ...DENIED_NAMES])
const EXACT_LAST = new Set(DENIED_FILE_NAMES)
const ALLOWED = new Set(ALLOWED_NAMES)

function isDeniedKey(key: string, isLast: boolean): boolean {
  if (ALLOWED.has(key)) return false
  if (EXACT.has(key) || (isLast && EXACT_LAST.has(key))) return true
  if (DENIED_SUFFIXES.some((suffix) => key.endsWith(suffix))) return true
  const compact = key.replace(/[\s._-]+/gu, '')
  if (DENIED_SUBSTRINGS.some((needle) => compact.includes(needle))) return true
  return DENIED_NAME_PATTERNS.some((pattern) => pattern.test(key))
}

/**
 * True when a relative path (already split into components, no `.`/`..`/empty ones) names a
 * version-control or credential location, a secret-looking file, or lies inside one. Every
 * component is checked, so `.git/config`, `a/.ssh/known_hosts` and `x/secrets/y.txt` are denied.
 * `lastIsFile: false` when the path names a directory (the file-only names do not apply to it).
 */
export function isDeniedPath(components: readonly string[], lastIsFile = true): boolean {
  const keys = components.map(componentKey)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    if (isDeniedKey(key, lastIsFile && i === keys.length - 1)) return true
    const next = keys[i + 1]
    if (next !== undefined && DENIED_PAIRS.some(([parent, child]) => parent === key && child === next))
      return true
  }
  return false
}
