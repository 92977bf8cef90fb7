/** One line of a file that contains the query. */
export interface TextHit {
  /** 1-based line number. */
  readonly line: number
  /** 1-based column of the first occurrence in that line, in UTF-16 code units. */
  readonly column: number
  /** The line, trimmed, cut to at most {@link PREVIEW_LENGTH} characters around the match. */
  readonly preview: string
}

/** Longest preview returned for a text match. */
export const PREVIEW_LENGTH = 200

// U+0130 is the only code point whose lower-case form is longer than itself; folding it first
// keeps offsets in the folded text equal to offsets in the original.
function foldCase(value: string): string {
  return value.replaceAll('\u0130', 'i').toLowerCase()
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** A trimmed line, or a {@link PREVIEW_LENGTH} window of it that shows the match. */
export function previewOf(line: string, matchIndex: number): string {
  const trimmed = line.trim()
  if (trimmed.length <= PREVIEW_LENGTH) return trimmed
  let start = Math.max(0, Math.min(matchIndex - 40, line.length - PREVIEW_LENGTH))
  let end = Math.min(line.length, start + PREVIEW_LENGTH)
  // Never cut a surrogate pair in half.
  if (start > 0 && isLowSurrogate(line.charCodeAt(start))) start += 1
  if (end < line.length && isHighSurrogate(line.charCodeAt(end - 1))) end -= 1
  return line.slice(start, end).trim()
}

/**
 * Lines of `text` containing `query` literally (no regular expression, no escapes), at most one
 * hit per line (like `grep`), at most `max` hits.
 */
export function findText(text: string, query: string, caseSensitive: boolean, max: number): TextHit[] {
  const haystack = caseSensitive ? text : foldCase(text)
  const needle = caseSensitive ? query : foldCase(query)
  const hits: TextHit[] = []
  let from = 0
  let line = 1
  let lineStart = 0
  while (hits.length < max && needle.length > 0) {
    const at = haystack.indexOf(needle, from)
    if (at === -1) break
    for (
      let nl = haystack.indexOf('\n', lineStart);
      nl !== -1 && nl < at;
      nl = haystack.indexOf('\n', nl + 1)
    ) {
      line += 1
      lineStart = nl + 1
    }
    let lineEnd = text.indexOf('\n', at)
    if (lineEnd === -1) lineEnd = text.length
    const content = text.slice(lineStart, text.charCodeAt(lineEnd - 1) === 13 ? lineEnd - 1 : lineEnd)
    hits.push({ line, column: at - lineStart + 1, preview: previewOf(content, at - lineStart) })
    from = lineEnd + 1
  }
  return hits
}

/** True when `text` has a line `findText` would report (same folding, same literal match). */
export function containsText(text: string, query: string, caseSensitive: boolean): boolean {
  return caseSensitive ? text.includes(query) : foldCase(text).includes(foldCase(query))
}
