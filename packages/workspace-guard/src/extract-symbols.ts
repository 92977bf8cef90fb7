import { previewOf } from './find-text.ts'
import { NOT_A_NAME, SYMBOL_LANGUAGES, type SymbolLanguage } from './symbol-rules.ts'
import type { SymbolKind } from './types.ts'

/** One definition found in a file. */
export interface SymbolHit {
  readonly line: number
  readonly column: number
  readonly kind: SymbolKind
  readonly name: string
  readonly preview: string
}

interface Container {
  readonly indent: number
  readonly tag: string
  memberIndent?: number
}

/** The language of a file, by extension (case-insensitive), or undefined. */
export function languageOf(path: string): SymbolLanguage | undefined {
  const dot = path.lastIndexOf('.')
  if (dot === -1) return undefined
  const extension = path.slice(dot).toLowerCase()
  return SYMBOL_LANGUAGES.find((language) => language.extensions.includes(extension))
}

function indentOf(line: string): number {
  let i = 0
  while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++
  return i
}

/**
 * The definitions in one file, in line order. Blank lines, comment lines and lone `{` lines do
 * not affect scoping; any other line at or left of a container's own indentation closes it.
 */
export function extractSymbols(text: string, language: SymbolLanguage): SymbolHit[] {
  const hits: SymbolHit[] = []
  const stack: Container[] = []
  const lines = text.split('\n')
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string
    const trimmed = line.trim()
    if (trimmed === '' || trimmed === '{' || language.comment.test(line)) continue
    const indent = indentOf(line)
    while (stack.length > 0 && indent <= (stack.at(-1) as Container).indent) stack.pop()
    const top = stack.at(-1)
    if (top !== undefined && top.memberIndent === undefined) top.memberIndent = indent
    const memberOf = top !== undefined && indent === top.memberIndent ? top.tag : undefined
    for (const rule of language.rules) {
      if (rule.within !== undefined && rule.within !== memberOf) continue
      if (rule.outside === true && memberOf !== undefined) continue
      const match = rule.pattern.exec(line)
      if (match === null) continue
      const name = match.groups?.name
      if (rule.statementLike === true && name !== undefined && NOT_A_NAME.has(name)) continue
      if (rule.kind !== undefined && name !== undefined) {
        const kind = typeof rule.kind === 'function' ? rule.kind(match.groups ?? {}) : rule.kind
        const column = (match.indices?.groups?.name?.[0] ?? line.indexOf(name)) + 1
        const content = line.endsWith('\r') ? line.slice(0, -1) : line
        hits.push({ line: index + 1, column, kind, name, preview: previewOf(content, column - 1) })
      }
      if (rule.opens !== undefined) stack.push({ indent, tag: rule.opens })
      break
    }
  }
  return hits
}
