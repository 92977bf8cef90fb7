import type { SymbolKind } from './types.ts'

// Line-based definition patterns per language. Deliberately regular expressions, not parsers:
// fast, dependency-free, and good enough to point an agent at a definition. Each pattern has a
// named group `name` and the `d` flag (for the column). Scoping is by indentation: a rule with
// `opens` starts a container (class, impl, const group) whose body is the following lines that
// are indented deeper; `within` rules match only at the container's member indentation.

/** One definition pattern. */
export interface SymbolRule {
  readonly pattern: RegExp
  /** The kind reported; a function of the match for keyword-driven patterns; none: opens only. */
  readonly kind?: SymbolKind | ((groups: Record<string, string | undefined>) => SymbolKind)
  /** Starts a container with this tag. */
  readonly opens?: string
  /** Matches only directly inside a container with this tag. */
  readonly within?: string
  /** Matches only outside any container's member position. */
  readonly outside?: boolean
  /** The pattern has no defining keyword (`foo(x) {`), so a statement like `if (x) {` fits it too. */
  readonly statementLike?: boolean
}

/** A language the `symbols` mode understands. */
export interface SymbolLanguage {
  readonly extensions: readonly string[]
  readonly rules: readonly SymbolRule[]
  /** Lines that are comments (skipped entirely). */
  readonly comment: RegExp
}

/** Names that make a `statementLike` match a statement, not a definition (`if (x) {`). */
export const NOT_A_NAME: ReadonlySet<string> = new Set(
  'if else for while do switch case catch try finally return throw new delete typeof void await yield super this import export function in of let var const with match loop unsafe synchronized assert'.split(
    ' ',
  ),
)

const JS_ID = '[A-Za-z_$][\\w$]*'
const JS_ARROW = `=\\s*(?:async\\s+)?(?:function\\b|(?:\\([^)]*\\)|${JS_ID})\\s*(?::[^=]*)?=>)`
const re = (source: string): RegExp => new RegExp(source, 'd')

const typescript: SymbolLanguage = {
  extensions: ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'],
  comment: /^\s*(?:\/\/|\/\*|\*)/,
  rules: [
    {
      pattern: re(
        `^\\s*(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:abstract\\s+)?class\\s+(?<name>${JS_ID})`,
      ),
      kind: 'class',
      opens: 'class',
    },
    { pattern: re(`^\\s*(?:export\\s+)?(?:declare\\s+)?interface\\s+(?<name>${JS_ID})`), kind: 'interface' },
    { pattern: re(`^\\s*(?:export\\s+)?(?:declare\\s+)?type\\s+(?<name>${JS_ID})\\b[^=]*=`), kind: 'type' },
    {
      pattern: re(`^\\s*(?:export\\s+)?(?:declare\\s+)?(?:const\\s+)?enum\\s+(?<name>${JS_ID})`),
      kind: 'enum',
    },
    {
      pattern: re(
        `^\\s*(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:async\\s+)?function\\s*(?:\\*\\s*)?(?<name>${JS_ID})`,
      ),
      kind: 'function',
    },
    {
      pattern: re(`^\\s*(?:export\\s+)?(?:const|let|var)\\s+(?<name>${JS_ID})\\s*(?::[^=]*)?${JS_ARROW}`),
      kind: 'function',
    },
    {
      pattern: re(`^\\s*export\\s+(?:declare\\s+)?(?:const|let|var)\\s+(?<name>${JS_ID})`),
      kind: 'constant',
    },
    { pattern: re('^(?:const|let|var)\\s+(?<name>[A-Z][A-Z0-9_]*)\\b'), kind: 'constant' },
    {
      pattern: re(
        `^\\s*(?:(?:public|private|protected|static|readonly|abstract|override|async|declare|accessor|get|set)\\s+)*(?:\\*\\s*)?(?<name>#?${JS_ID})\\s*(?:[?!]\\s*)?(?:<[^>]*>\\s*)?\\(`,
      ),
      kind: 'method',
      within: 'class',
      statementLike: true,
    },
    {
      pattern: re(
        `^\\s*(?:(?:public|private|protected|static|readonly|override)\\s+)*(?<name>#?${JS_ID})\\s*(?::[^=]*)?${JS_ARROW}`,
      ),
      kind: 'method',
      within: 'class',
      statementLike: true,
    },
  ],
}

const python: SymbolLanguage = {
  extensions: ['.py', '.pyi'],
  comment: /^\s*#/,
  rules: [
    { pattern: re('^\\s*class\\s+(?<name>[A-Za-z_]\\w*)'), kind: 'class', opens: 'class' },
    { pattern: re('^\\s*(?:async\\s+)?def\\s+(?<name>[A-Za-z_]\\w*)'), kind: 'method', within: 'class' },
    { pattern: re('^\\s*(?:async\\s+)?def\\s+(?<name>[A-Za-z_]\\w*)'), kind: 'function', outside: true },
    { pattern: re('^(?<name>[A-Z][A-Z0-9_]*)\\s*(?::[^=]*)?=(?!=)'), kind: 'constant' },
  ],
}

const GO_ID = '[A-Za-z_]\\w*'
const go: SymbolLanguage = {
  extensions: ['.go'],
  comment: /^\s*(?:\/\/|\/\*|\*)/,
  rules: [
    { pattern: re(`^func\\s*\\([^)]*\\)\\s*(?<name>${GO_ID})`), kind: 'method' },
    { pattern: re(`^func\\s+(?<name>${GO_ID})`), kind: 'function' },
    { pattern: re('^const\\s*\\(\\s*$'), opens: 'const' },
    { pattern: re('^type\\s*\\(\\s*$'), opens: 'type' },
    { pattern: re(`^\\s*(?<name>${GO_ID})\\b`), kind: 'constant', within: 'const' },
    { pattern: re(`^(?:type\\s+|\\s+)(?<name>${GO_ID})(?:\\[[^\\]]*\\])?\\s+struct\\b`), kind: 'struct' },
    {
      pattern: re(`^(?:type\\s+|\\s+)(?<name>${GO_ID})(?:\\[[^\\]]*\\])?\\s+interface\\b`),
      kind: 'interface',
    },
    { pattern: re(`^type\\s+(?<name>${GO_ID})\\b`), kind: 'type' },
    { pattern: re(`^\\s*(?<name>${GO_ID})\\b`), kind: 'type', within: 'type' },
    { pattern: re(`^const\\s+(?<name>${GO_ID})`), kind: 'constant' },
  ],
}

const RS_VIS = '(?:pub(?:\\([^)]*\\))?\\s+)?'
const RS_FN = `^\\s*${RS_VIS}(?:default\\s+)?(?:(?:const|async|unsafe|extern(?:\\s+"[^"]*")?)\\s+)*fn\\s+(?<name>[A-Za-z_]\\w*)`
const rust: SymbolLanguage = {
  extensions: ['.rs'],
  comment: /^\s*(?:\/\/|\/\*|\*)/,
  rules: [
    {
      pattern: re(
        '^\\s*(?:unsafe\\s+)?impl\\b(?:\\s*<[^{]*?>)?\\s+(?:[\\w:]+(?:<[^{]*?>)?\\s+for\\s+)?(?<name>[A-Za-z_]\\w*)',
      ),
      kind: 'impl',
      opens: 'impl',
    },
    {
      pattern: re(`^\\s*${RS_VIS}(?:unsafe\\s+)?trait\\s+(?<name>[A-Za-z_]\\w*)`),
      kind: 'trait',
      opens: 'impl',
    },
    { pattern: re(RS_FN), kind: 'method', within: 'impl' },
    { pattern: re(RS_FN), kind: 'function', outside: true },
    { pattern: re(`^\\s*${RS_VIS}struct\\s+(?<name>[A-Za-z_]\\w*)`), kind: 'struct' },
    { pattern: re(`^\\s*${RS_VIS}enum\\s+(?<name>[A-Za-z_]\\w*)`), kind: 'enum' },
    { pattern: re(`^\\s*${RS_VIS}type\\s+(?<name>[A-Za-z_]\\w*)`), kind: 'type' },
    {
      pattern: re(`^\\s*${RS_VIS}(?:const|static)\\s+(?:mut\\s+)?(?<name>[A-Za-z_]\\w*)\\s*:`),
      kind: 'constant',
    },
  ],
}

const JAVA_ID = '[A-Za-z_$][\\w$]*'
/** One space-free piece of a field type (`Map<String,` `Integer>`): pieces are separated by spaces. */
const JAVA_TYPE_WORD = '[\\w$.<>\\[\\],?]+'
const JAVA_ANNOTATIONS = '(?:@[\\w.]+(?:\\([^)]*\\))?\\s+)*'
const JAVA_MODIFIERS =
  '(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp|synchronized|native|default|transient|volatile)\\s+)*'
const JAVA_KINDS: Record<string, SymbolKind> = {
  class: 'class',
  interface: 'interface',
  '@interface': 'interface',
  enum: 'enum',
  record: 'record',
}
const java: SymbolLanguage = {
  extensions: ['.java'],
  comment: /^\s*(?:\/\/|\/\*|\*)/,
  rules: [
    {
      pattern: re(
        `^\\s*${JAVA_ANNOTATIONS}${JAVA_MODIFIERS}(?<keyword>class|interface|enum|record|@interface)\\s+(?<name>${JAVA_ID})`,
      ),
      kind: (groups) => JAVA_KINDS[groups.keyword ?? 'class'] ?? 'class',
      opens: 'type',
    },
    {
      pattern: re(
        `^\\s*(?:(?:public|protected|private)\\s+)?(?:static\\s+final|final\\s+static)\\s+${JAVA_TYPE_WORD}(?: +${JAVA_TYPE_WORD})*?\\s+(?<name>[A-Z][A-Z0-9_]*)\\s*[=;]`,
      ),
      kind: 'constant',
      within: 'type',
    },
    {
      pattern: re(
        `^\\s*${JAVA_ANNOTATIONS}${JAVA_MODIFIERS}(?:<[^>]*>\\s+)?[\\w$.]+(?:<.*>)?(?:\\[\\])*\\s+(?<name>${JAVA_ID})\\s*\\(`,
      ),
      kind: 'method',
      within: 'type',
      statementLike: true,
    },
    {
      // A package-private constructor: no modifier and no return type, so demand the body brace.
      pattern: re(
        `^\\s*(?<name>[A-Z][\\w$]*)\\s*\\([^)]*\\)\\s*(?:throws\\s[\\w$.,\\s]+)?\\{\\s*(?:\\}\\s*)?$`,
      ),
      kind: 'method',
      within: 'type',
      statementLike: true,
    },
  ],
}

/** Every language `symbols` understands. */
export const SYMBOL_LANGUAGES: readonly SymbolLanguage[] = [typescript, python, go, rust, java]

/** File extensions `symbols` looks at. */
export const SYMBOL_EXTENSIONS: readonly string[] = SYMBOL_LANGUAGES.flatMap(
  (language) => language.extensions,
)
