// How one path component is compared with the deny-list, and which characters make a component
// unsafe before any comparison.

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
