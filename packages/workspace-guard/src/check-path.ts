// The pure path rules: no I/O, the same answer for every root. How a component is compared with
// the deny-list, which components are unsafe whatever their name, which paths are denied, and the
// checks built on them.

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

/**
 * Characters that look like a dot or a slash without being one (ONE DOT LEADER, FULLWIDTH FULL
 * STOP, DIVISION SLASH, …). Some of them NFKC-normalise to `.`, `/` or `\`, others do not; a
 * component containing any of them is refused instead of guessing what a downstream consumer
 * (a shell, a URL parser, another OS) would make of it.
 */
const LOOKALIKE_SEPARATORS =
  /[\u2024\u2025\u2026\u2215\u2216\u2044\u29f8\u29f9\u2571\u2572\u3002\ufe52\ufe68\uff0e\uff0f\uff3c\uff61]|\u0338|\u0337/u

/**
 * Control (Cc), format (Cf: bidi overrides, zero-width joiners, BOM), line/paragraph separators,
 * the replacement character (a sign of mis-decoded bytes) and lone surrogates (Node would encode
 * them as U+FFFD, so two different strings would name the same file).
 */
const UNSAFE_CHARACTERS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\ufffd]|[\ud800-\udfff]/u

/** The longest component most file systems accept, in UTF-8 bytes. */
const MAX_COMPONENT_BYTES = 255

/** True when a component must be refused whatever its name (unsafe characters, lookalikes, dots only). */
export function isUnsafeComponent(component: string): boolean {
  if (UNSAFE_CHARACTERS.test(component) || LOOKALIKE_SEPARATORS.test(component)) return true
  if (component.includes('\\') || component.includes('/')) return true
  if (Buffer.byteLength(component, 'utf8') > MAX_COMPONENT_BYTES) return true
  const folded = component.normalize('NFKC')
  // A component that normalises into a separator or into dots only (`．．`, `..`, `...`) is a
  // traversal attempt or a Windows-ism (`...` meant `../..` there); never a real file name.
  if (folded.includes('/') || folded.includes('\\')) return true
  return /^\.{2,}$/.test(folded)
}

/**
 * The key a component is compared with: NFKC (fullwidth and compatibility forms fold to ASCII),
 * lower case (case-insensitive file systems), trailing dots and spaces removed (Windows drops
 * them: `.env.` and `.env ` open `.env` there).
 */
export function componentKey(component: string): string {
  return component
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[. ]+$/u, '')
}

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
