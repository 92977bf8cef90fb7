// Required literals of a regular expression, the prefilter of RE2 and of code-search indexes
// (Cox, "Regular Expression Matching with a Trigram Index", 2012): sets of strings such that
// every match of the pattern contains at least one string of each set. Where a set has none of
// its strings in a text, the pattern cannot match there and is not run. The screen's patterns are
// long alternations that a backtracking engine tries at every position; most texts lack the words
// they need, and one pass that proves it is far cheaper than the attempt.
//
// Start literals are the same idea for where a match begins: strings one of which begins every
// match. A pattern that begins with a long alternation is tried by the engine at every position;
// tried only where a start literal begins (found in the same pass), it costs next to nothing.
//
// The analysis is conservative: what it does not understand (classes of many characters, `.`,
// back-references, unbounded or optional repetition of anything but a fixed string) contributes
// nothing, and a pattern it cannot bound at all gets no prefilter. Assertions (`^ $ \b`,
// lookarounds) consume nothing, so they add no characters to a match. Case-insensitive patterns
// are not analysed (the screen's views are lower case; no rule carries `i`).

/** What is known about the text a (sub)pattern matches. */
type Info =
  /** The match is exactly one of these strings. */
  | { readonly kind: 'exact'; readonly set: ReadonlySet<string> }
  /** The match contains a string of each of these sets (none empty, none holding ""). */
  | { readonly kind: 'req'; readonly sets: readonly ReadonlySet<string>[] }
  /** Nothing is known. */
  | { readonly kind: 'any' }

/** Exact sets larger than this are reduced to a requirement (keeps the analysis small). */
const MAX_EXACT = 64
/** A character class of at most this many characters is kept as alternatives. */
const MAX_CLASS = 4
/** At most this many sets are kept for one (sub)pattern, the most selective ones. */
const MAX_SETS = 6

const ANY: Info = { kind: 'any' }
const EMPTY: Info = { kind: 'exact', set: new Set(['']) }

/**
 * Sets of strings such that every match of `pattern` contains a string of each set, or
 * `undefined` when nothing is known (then the pattern must always run). Each set is reduced: no
 * string in it contains another one of it.
 *
 * @example
 * requiredLiterals(/(?:tell ?me|show) [a-z]+ password/)  // [['show ', 'tellme ', 'tell me '], [' password']]
 * requiredLiterals(/\bcat ?(?:\.env|id_rsa)/)            // [['cat.env', 'cat .env', 'catid_rsa', 'cat id_rsa']]
 */
export function requiredLiterals(pattern: RegExp): readonly (readonly string[])[] | undefined {
  if (pattern.flags.includes('i') || pattern.flags.includes('v')) return undefined
  const info = toRequirement(required(parse(pattern)))
  if (info.kind !== 'req' || info.sets.length === 0) return undefined
  return info.sets.map(reduce)
}

/** The syntax tree of a pattern, or of a Unicode pattern (`u`) with code points as characters. */
function parse(pattern: RegExp): Node {
  return new Parser(pattern.source, pattern.flags.includes('u')).parse()
}

/** What `node` requires of every match (see {@link Info}). */
function required(node: Node): Info {
  switch (node.t) {
    case 'set':
      return { kind: 'exact', set: node.set }
    case 'any':
      return ANY
    case 'empty':
      return EMPTY
    case 'alt':
      return union(node.xs.map(required))
    case 'seq':
      return node.xs.length === 0 ? EMPTY : concat(node.xs.flatMap(requiredPieces))
    case 'rep':
      return concat(requiredPieces(node))
  }
}

/** A sequence item as pieces of the sequence's requirement. */
function requiredPieces(node: Node): Info[] {
  if (node.t !== 'rep') return [required(node)]
  const inner = required(node.x)
  // `x{2,}` of a fixed string: `xx` and then an unknown number more (keeps `ab+c` needing "ab").
  if (inner.kind === 'exact' && node.min > 0 && node.max > node.min)
    return [repeat(inner, node.min, node.min), ANY]
  return [repeat(inner, node.min, node.max)]
}

// ── Start literals ───────────────────────────────────────────────────────────────────────────

/** What is known about how a (sub)pattern's matches begin. */
type Start =
  /** The match is exactly one of these strings. */
  | { readonly kind: 'exact'; readonly set: ReadonlySet<string> }
  /** The match begins with one of these strings (none empty). */
  | { readonly kind: 'prefix'; readonly set: ReadonlySet<string> }
  /** Nothing is known. */
  | { readonly kind: 'none' }

const NONE: Start = { kind: 'none' }
/** Start sets larger than this are cut to shorter prefixes (keeps the analysis small). */
const MAX_START = 256
/** Start literals are cut to this many characters. */
const MAX_START_LENGTH = 8

/**
 * Strings such that every match of `pattern` begins with one of them (after its leading
 * assertions), or `undefined` when that is not known. A search for the pattern then only has to
 * try the positions where one of them begins: `pattern.test(text)` is true exactly when the
 * pattern, made sticky, matches at one of those positions (an assertion still sees the text
 * before the position).
 *
 * @example
 * startLiterals(/\b(?:ignore|forget)\b/) // ['forget', 'ignore']
 * startLiterals(/(?<=\s)[.-]+ /) // ['-', '.']
 */
export function startLiterals(pattern: RegExp): readonly string[] | undefined {
  if (pattern.flags.includes('i') || pattern.flags.includes('v')) return undefined
  const start = starts(parse(pattern))
  if (start.kind === 'none' || start.set.has('') || start.set.size === 0) return undefined
  // A string's first MAX_START_LENGTH characters find the same places (and a few more): enough
  // to tell them apart from the rest of a text, and a far smaller automaton. A string that
  // begins with another one of the set adds no place.
  const cut = new Set([...start.set].map((s) => s.slice(0, MAX_START_LENGTH)))
  const sorted = [...cut].sort((a, b) => a.length - b.length || (a < b ? -1 : 1))
  const kept: string[] = []
  for (const s of sorted) if (!kept.some((k) => s.startsWith(k))) kept.push(s)
  return kept
}

/**
 * `set` as a start set of the given kind, or, when it is too large, as the shortest cut of its
 * strings (their first characters) that is small enough: every match still begins with one.
 */
function bounded(set: ReadonlySet<string>, kind: 'exact' | 'prefix'): Start {
  if (set.size <= MAX_START) return { kind, set }
  if (set.has('')) return NONE
  let length = 0
  for (const s of set) length = Math.max(length, s.length)
  while (length > 1) {
    length--
    const shorter = new Set<string>()
    for (const s of set) shorter.add(s.slice(0, length))
    if (shorter.size <= MAX_START) return { kind: 'prefix', set: shorter }
  }
  return NONE
}

/** Every string of `a` followed by every string of `b`, or undefined when that makes too many. */
function joinAll(a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> | undefined {
  if (a.size * b.size > MAX_START) return undefined
  const out = new Set<string>()
  for (const x of a) for (const y of b) out.add(x + y)
  return out
}

function starts(node: Node): Start {
  switch (node.t) {
    case 'set':
      return { kind: 'exact', set: node.set }
    case 'any':
      return NONE
    case 'empty':
      return { kind: 'exact', set: new Set(['']) }
    case 'alt': {
      const set = new Set<string>()
      let exact = true
      for (const x of node.xs) {
        const b = starts(x)
        if (b.kind === 'none') return NONE
        if (b.kind === 'prefix') exact = false
        for (const s of b.set) set.add(s)
      }
      // A branch that may match nothing lets the match begin with whatever follows: unknown here.
      return exact ? bounded(set, 'exact') : set.has('') ? NONE : bounded(set, 'prefix')
    }
    case 'seq': {
      let current: ReadonlySet<string> = new Set([''])
      for (const x of node.xs) {
        const next = starts(x)
        // Nothing known of what follows, or too many combinations: the match begins with `current`.
        const joined = next.kind === 'none' ? undefined : joinAll(current, next.set)
        if (joined === undefined) return current.has('') ? NONE : { kind: 'prefix', set: current }
        if (next.kind === 'prefix') return { kind: 'prefix', set: joined }
        current = joined
      }
      return { kind: 'exact', set: current }
    }
    case 'rep': {
      const inner = starts(node.x)
      if (inner.kind === 'none') return NONE
      if (node.min === 0) {
        if (node.max === 1 && inner.kind === 'exact') return bounded(new Set([...inner.set, '']), 'exact')
        return NONE
      }
      if (inner.kind === 'exact' && node.min === node.max) {
        let set: ReadonlySet<string> = new Set([''])
        for (let i = 0; i < node.min; i++) {
          const joined = joinAll(set, inner.set)
          if (joined === undefined) return set.has('') ? NONE : { kind: 'prefix', set }
          set = joined
        }
        return { kind: 'exact', set }
      }
      // At least one copy: the match begins like the first one.
      return inner.set.has('') ? NONE : { kind: 'prefix', set: inner.set }
    }
  }
}

/** Removes every string that contains a shorter one of the set (finding the shorter one suffices). */
function reduce(set: ReadonlySet<string>): string[] {
  const sorted = [...set].sort((a, b) => a.length - b.length || (a < b ? -1 : 1))
  const kept: string[] = []
  for (const s of sorted) if (!kept.some((k) => s.includes(k))) kept.push(s)
  return kept
}

const usable = (set: ReadonlySet<string>): boolean => set.size > 0 && !set.has('')

function toRequirement(info: Info): Info {
  if (info.kind !== 'exact') return info
  return usable(info.set) ? { kind: 'req', sets: [info.set] } : ANY
}

// Words so common in English that a set holding one of them rules out almost no text.
const COMMON = new Set(
  'a an and any all are as at be by can do for from if in is it its me my no not now of on or our so that the this to use we what will with you your'.split(
    ' ',
  ),
)

/** How long a string counts for selectivity: its length without spaces, 1 for a common word. */
function weight(s: string): number {
  const word = s.trim()
  return COMMON.has(word) ? 1 : word.length
}

/** How selective a set is: rarer strings first (longer, not common words; up to 6), then fewer strings. */
function rank(set: ReadonlySet<string>): number {
  let least = Number.POSITIVE_INFINITY
  for (const s of set) least = Math.min(least, weight(s))
  return Math.min(least, 6) * 1000 - set.size
}

/** The `max` most selective of `sets`. */
function keepBest(sets: readonly ReadonlySet<string>[], max = MAX_SETS): ReadonlySet<string>[] {
  return [...sets].sort((a, b) => rank(b) - rank(a)).slice(0, max)
}

function union(infos: readonly Info[]): Info {
  if (infos.every((i) => i.kind === 'exact')) {
    const set = new Set<string>()
    for (const i of infos) for (const s of (i as { set: ReadonlySet<string> }).set) set.add(s)
    return set.size <= MAX_EXACT ? { kind: 'exact', set } : toRequirement({ kind: 'exact', set })
  }
  // A match comes from one branch: it holds one string of that branch's best set. (Keeping every
  // set of every branch would need a disjunction of conjunctions; the best one per branch is sound.)
  const set = new Set<string>()
  for (const i of infos) {
    const r = toRequirement(i)
    if (r.kind !== 'req') return ANY
    for (const s of keepBest(r.sets, 1)[0] as ReadonlySet<string>) set.add(s)
  }
  return { kind: 'req', sets: [set] }
}

function product(a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> | undefined {
  if (a.size * b.size > MAX_EXACT) return undefined
  const out = new Set<string>()
  for (const x of a) for (const y of b) out.add(x + y)
  return out
}

function concat(pieces: readonly Info[]): Info {
  let current: ReadonlySet<string> = new Set([''])
  let broken = false
  // Every piece's requirement holds for the whole: a conjunction.
  const sets: ReadonlySet<string>[] = []
  const offer = (set: ReadonlySet<string>): void => {
    if (usable(set)) sets.push(set)
  }
  for (const piece of pieces) {
    if (piece.kind === 'exact') {
      const joined = product(current, piece.set)
      if (joined) current = joined
      else {
        // Too many combinations: what is known so far is a contiguous part of every match.
        offer(current)
        current = piece.set
        broken = true
      }
      continue
    }
    offer(current)
    current = new Set([''])
    broken = true
    if (piece.kind === 'req') for (const set of piece.sets) offer(set)
  }
  if (!broken) return { kind: 'exact', set: current }
  offer(current)
  return sets.length > 0 ? { kind: 'req', sets: keepBest(sets) } : ANY
}

function repeat(info: Info, min: number, max: number): Info {
  if (min === 0) {
    // `x?` of a fixed string is that string or nothing; anything else may match nothing at all
    // or an unknown number of copies: nothing known.
    if (max === 1 && info.kind === 'exact') return union([info, EMPTY])
    return ANY
  }
  if (info.kind === 'exact' && min === max) {
    let set: ReadonlySet<string> = new Set([''])
    for (let i = 0; i < min; i++) {
      const next = product(set, info.set)
      if (!next) return toRequirement(info)
      set = next
    }
    return { kind: 'exact', set }
  }
  // At least one copy: whatever one copy requires.
  return toRequirement(info)
}

/**
 * A pattern's syntax tree, as far as the analyses need it: `set` one character of a small set,
 * `any` an unknown character (a wide class, `.`) or unknown text (a back-reference), `empty` an
 * assertion (consumes nothing), `alt` alternatives, `seq` a sequence, `rep` a repetition.
 */
type Node =
  | { readonly t: 'set'; readonly set: ReadonlySet<string> }
  | { readonly t: 'any' }
  | { readonly t: 'empty' }
  | { readonly t: 'alt'; readonly xs: readonly Node[] }
  | { readonly t: 'seq'; readonly xs: readonly Node[] }
  | { readonly t: 'rep'; readonly x: Node; readonly min: number; readonly max: number }

const ANY_NODE: Node = { t: 'any' }
const EMPTY_NODE: Node = { t: 'empty' }
const char = (c: string): Node => ({ t: 'set', set: new Set([c]) })

class Parser {
  private i = 0
  constructor(
    private readonly src: string,
    private readonly unicode: boolean,
  ) {}

  parse(): Node {
    const info = this.alternation()
    if (this.i !== this.src.length) throw new SyntaxError(`prefilter: unexpected ')' at ${this.i}`)
    return info
  }

  private alternation(): Node {
    const branches = [this.sequence()]
    while (this.src[this.i] === '|') {
      this.i++
      branches.push(this.sequence())
    }
    return branches.length === 1 ? (branches[0] as Node) : { t: 'alt', xs: branches }
  }

  private sequence(): Node {
    const xs: Node[] = []
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')')
      xs.push(this.quantified(this.atom()))
    return { t: 'seq', xs }
  }

  /** The atom with the quantifier that follows it. */
  private quantified(atom: Node): Node {
    const c = this.src[this.i]
    let min: number
    let max: number
    if (c === '?' || c === '*' || c === '+') {
      this.i++
      min = c === '+' ? 1 : 0
      max = c === '?' ? 1 : Number.POSITIVE_INFINITY
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i))
      if (!m) return atom
      this.i += m[0].length
      min = Number(m[1])
      max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3])
    } else return atom
    if (this.src[this.i] === '?') this.i++ // lazy: the same strings
    return { t: 'rep', x: atom, min, max }
  }

  /** One literal character of the source: a whole code point in a Unicode pattern. */
  private literal(): string {
    const cp = this.unicode ? (this.src.codePointAt(this.i) as number) : this.src.charCodeAt(this.i)
    const ch = this.unicode ? String.fromCodePoint(cp) : String.fromCharCode(cp)
    this.i += ch.length
    return ch
  }

  private atom(): Node {
    const c = this.src[this.i] as string
    if (!'([.^$\\'.includes(c)) return char(this.literal())
    this.i++
    switch (c) {
      case '(':
        return this.group()
      case '[':
        return this.characterClass()
      case '.':
        return ANY_NODE
      case '^':
      case '$':
        return EMPTY_NODE
      default:
        return this.escape()
    }
  }

  private group(): Node {
    let assertion = false
    if (this.src[this.i] === '?') {
      const rest = this.src.slice(this.i)
      if (rest.startsWith('?:')) this.i += 2
      else if (rest.startsWith('?=') || rest.startsWith('?!')) {
        this.i += 2
        assertion = true
      } else if (rest.startsWith('?<=') || rest.startsWith('?<!')) {
        this.i += 3
        assertion = true
      } else if (rest.startsWith('?<')) {
        const end = this.src.indexOf('>', this.i)
        if (end < 0) throw new SyntaxError('prefilter: unterminated group name')
        this.i = end + 1
      } else throw new SyntaxError(`prefilter: unknown group at ${this.i}`)
    }
    const inner = this.alternation()
    if (this.src[this.i] !== ')') throw new SyntaxError('prefilter: unterminated group')
    this.i++
    // An assertion consumes nothing: it adds no characters to the match.
    return assertion ? EMPTY_NODE : inner
  }

  private characterClass(): Node {
    let negated = false
    if (this.src[this.i] === '^') {
      negated = true
      this.i++
    }
    const members = new Set<string>()
    let wide = false
    while (this.i < this.src.length && this.src[this.i] !== ']') {
      let member: string | undefined
      if (this.src[this.i] === '\\') {
        this.i++
        member = this.classEscape()
      } else member = this.literal()
      // A range `a-z` (a '-' first, last or after a range is itself).
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i++
        let to: string | undefined
        if (this.src[this.i] === '\\') {
          this.i++
          to = this.classEscape()
        } else to = this.literal()
        if (member === undefined || to === undefined) wide = true
        else {
          const from = member.codePointAt(0) as number
          const until = to.codePointAt(0) as number
          if (until - from + 1 > MAX_CLASS) wide = true
          else for (let cp = from; cp <= until; cp++) members.add(String.fromCodePoint(cp))
        }
        continue
      }
      if (member === undefined) wide = true
      else members.add(member)
    }
    if (this.src[this.i] !== ']') throw new SyntaxError('prefilter: unterminated class')
    this.i++
    if (negated || wide || members.size === 0 || members.size > MAX_CLASS) return ANY_NODE
    return { t: 'set', set: members }
  }

  /** One escape inside a class: its character, or `undefined` for a class escape (`\w`, `\p{…}`). */
  private classEscape(): string | undefined {
    const c = this.src[this.i] as string
    if (c === 'b') {
      this.i++
      return '\b'
    }
    if (c === '-') {
      this.i++
      return '-'
    }
    return this.characterEscape()
  }

  private escape(): Node {
    const c = this.src[this.i] as string
    if (c === 'b' || c === 'B') {
      this.i++
      return EMPTY_NODE
    }
    if (/[1-9]/.test(c)) {
      // A back-reference: some earlier text again, not known here.
      while (/[0-9]/.test(this.src[this.i] ?? '')) this.i++
      return ANY_NODE
    }
    if (c === 'k' && this.src[this.i + 1] === '<') {
      this.i = this.src.indexOf('>', this.i) + 1
      return ANY_NODE
    }
    const ch = this.characterEscape()
    return ch === undefined ? ANY_NODE : char(ch)
  }

  /** A character escape after `\`: the character, or `undefined` for a class (`\d \w \s \p{…}`). */
  private characterEscape(): string | undefined {
    const c = this.src[this.i] as string
    this.i++
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 's':
      case 'S':
        return undefined
      case 'p':
      case 'P':
        if (this.unicode && this.src[this.i] === '{') this.i = this.src.indexOf('}', this.i) + 1
        return this.unicode ? undefined : c
      case 'n':
        return '\n'
      case 'r':
        return '\r'
      case 't':
        return '\t'
      case 'f':
        return '\f'
      case 'v':
        return '\v'
      case '0':
        return '\0'
      case 'c':
        return undefined
      case 'x': {
        const hex = /^[0-9a-fA-F]{2}/.exec(this.src.slice(this.i))
        if (!hex) return 'x'
        this.i += 2
        return String.fromCharCode(Number.parseInt(hex[0], 16))
      }
      case 'u': {
        const braced = this.unicode ? /^\{([0-9a-fA-F]{1,6})\}/.exec(this.src.slice(this.i)) : null
        if (braced) {
          this.i += braced[0].length
          return String.fromCodePoint(Number.parseInt(braced[1] as string, 16))
        }
        const hex = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.i))
        if (!hex) return 'u'
        this.i += 4
        return String.fromCharCode(Number.parseInt(hex[0], 16))
      }
      default:
        return c
    }
  }
}

/** What one pass of a {@link LiteralIndex} found in a text. */
export interface LiteralHits {
  /** For each literal set (in constructor order): 1 when one of its literals occurs in the text. */
  readonly sets: Uint8Array
  /**
   * For each start group (in constructor order): the positions where one of its literals begins,
   * in the order their literals end (`undefined`: none).
   */
  readonly starts: ReadonlyArray<number[] | undefined>
}

/**
 * Finds, in one pass over a text, which of several literal sets have a member in it, and where
 * the literals of several start groups begin (Aho and Corasick, "Efficient string matching",
 * 1975): a deterministic automaton over every literal, its alphabet reduced to the characters the
 * literals use. Linear in the text (plus the positions reported).
 *
 * @example
 * const index = new LiteralIndex([['password', 'token'], ['curl']], [['ignore', 'forget']])
 * index.scan('print the token') // Uint8Array [1, 0]
 * index.search('forget it, ignore it').starts // [[0, 11]]
 */
export class LiteralIndex {
  /** UTF-16 code unit → alphabet index; 0 is every code unit no literal uses (one lookup, no map). */
  private readonly alphabet = new Uint8Array(0x10000)
  private readonly width: number
  /**
   * state × alphabet → next state: 16-bit while the states fit (they do for the screening rules:
   * about 16 000 states × 166 letters, 5 MB instead of 10).
   */
  private readonly next: Uint16Array | Uint32Array
  /** state → index in `outputs` of what it completes (0: nothing). */
  private readonly output: Uint32Array
  /** The sets each output completes a literal of. */
  private readonly outputs: number[][] = [[]]
  /** The start groups each output completes a literal of, as pairs: group, literal length. */
  private readonly startOutputs: number[][] = [[]]
  private readonly count: number
  private readonly groups: number

  constructor(sets: readonly (readonly string[])[], starts: readonly (readonly string[])[] = []) {
    this.count = sets.length
    this.groups = starts.length
    // Every literal with its tag: a set `s` as `s`, the start literal numbered `k` as `-1 - k`
    // (its group and length in `startGroup`/`startLength`).
    const literals: string[] = []
    const tags: number[] = []
    sets.forEach((members, set) => {
      for (const literal of members) {
        literals.push(literal)
        tags.push(set)
      }
    })
    const startGroup: number[] = []
    const startLength: number[] = []
    starts.forEach((members, group) => {
      for (const literal of new Set(members)) {
        if (literal.length === 0) throw new RangeError('LiteralIndex: an empty start literal')
        literals.push(literal)
        tags.push(-1 - startGroup.length)
        startGroup.push(group)
        startLength.push(literal.length)
      }
    })
    // The alphabet first, so the trie can be built straight into rows of the final width.
    let letters = 1
    for (const literal of literals)
      for (let i = 0; i < literal.length; i++) {
        const code = literal.charCodeAt(i)
        if (this.alphabet[code] === 0) {
          if (letters === 255) throw new RangeError('LiteralIndex: more than 254 distinct characters')
          this.alphabet[code] = letters++
        }
      }
    this.width = letters
    // The trie as linked lists of edges in typed arrays (at most one state per literal character):
    // a few arrays of garbage rather than a map per state, and the automaton's table is then
    // allocated once, at its exact size.
    let capacity = 1
    for (const literal of literals) capacity += literal.length
    const firstEdge = new Int32Array(capacity).fill(-1)
    const nextEdge = new Int32Array(capacity)
    const edgeLetter = new Uint8Array(capacity)
    const edgeChild = new Uint32Array(capacity)
    let states = 1
    const childOf = (state: number, a: number): number => {
      for (let e = firstEdge[state] as number; e >= 0; e = nextEdge[e] as number)
        if (edgeLetter[e] === a) return edgeChild[e] as number
      return 0
    }
    /** state → the tags it completes itself (sparse: most states complete nothing). */
    const ends = new Map<number, number[]>()
    literals.forEach((literal, k) => {
      let state = 0
      for (let i = 0; i < literal.length; i++) {
        const a = this.alphabet[literal.charCodeAt(i)] as number
        let child = childOf(state, a)
        if (child === 0) {
          child = states++
          const e = child - 1
          edgeLetter[e] = a
          edgeChild[e] = child
          nextEdge[e] = firstEdge[state] as number
          firstEdge[state] = e
        }
        state = child
      }
      const tag = tags[k] as number
      const list = ends.get(state)
      if (list === undefined) ends.set(state, [tag])
      else if (!list.includes(tag)) list.push(tag)
    })
    const next = states <= 0x10000 ? new Uint16Array(states * letters) : new Uint32Array(states * letters)
    this.next = next
    this.output = new Uint32Array(states)
    // Breadth first: each state's failure state is complete before the state itself, and what a
    // state completes includes what its failure state completes (the literals that are suffixes).
    const fail = new Uint32Array(states)
    /** state → everything it completes, its failure states' tags included (sparse). */
    const merged = new Map<number, number[]>()
    const queue = new Uint32Array(states)
    let tail = 0
    for (let e = firstEdge[0] as number; e >= 0; e = nextEdge[e] as number) {
      next[edgeLetter[e] as number] = edgeChild[e] as number
      queue[tail++] = edgeChild[e] as number
    }
    for (let head = 0; head < tail; head++) {
      const state = queue[head] as number
      const failState = fail[state] as number
      const own = ends.get(state)
      const inherited = merged.get(failState)
      const found =
        own === undefined ? inherited : inherited === undefined ? own : [...new Set([...own, ...inherited])]
      if (found !== undefined) merged.set(state, found)
      // The failure state's row (complete, as it is shallower), with this state's children over it.
      const from = failState * letters
      const row = state * letters
      next.copyWithin(row, from, from + letters)
      for (let e = firstEdge[state] as number; e >= 0; e = nextEdge[e] as number) {
        const a = edgeLetter[e] as number
        const child = edgeChild[e] as number
        fail[child] = next[from + a] as number
        next[row + a] = child
        queue[tail++] = child
      }
      if (found !== undefined && found.length > 0) {
        this.output[state] = this.outputs.length
        this.outputs.push(found.filter((tag) => tag >= 0))
        this.startOutputs.push(
          found
            .filter((tag) => tag < 0)
            .flatMap((tag) => [startGroup[-1 - tag], startLength[-1 - tag]] as number[]),
        )
      }
    }
  }

  /** For each set (in constructor order): 1 when one of its literals occurs in `text`. */
  scan(text: string): Uint8Array {
    return this.search(text).sets
  }

  /** The sets with a literal in `text` (a string, or its code units) and where start literals begin. */
  search(text: string | Uint8Array | Uint16Array, length = text.length): LiteralHits {
    const { alphabet, width, next, output, outputs, startOutputs } = this
    // Which outputs occurred: marked in the pass (one store), their sets afterwards (an output
    // recurs often, its sets need marking once).
    const seen = new Uint8Array(outputs.length)
    const seenList: number[] = []
    const starts: Array<number[] | undefined> = new Array(this.groups)
    let state = 0
    const string = typeof text === 'string'
    for (let i = 0; i < length; i++) {
      const code = string ? text.charCodeAt(i) : (text[i] as number)
      state = next[state * width + (alphabet[code] as number)] as number
      const out = output[state] as number
      if (out === 0) continue
      if (seen[out] === 0) {
        seen[out] = 1
        seenList.push(out)
      }
      const pairs = startOutputs[out] as number[]
      for (let k = 0; k < pairs.length; k += 2) {
        const group = pairs[k] as number
        const at = i + 1 - (pairs[k + 1] as number)
        const list = starts[group]
        if (list === undefined) starts[group] = [at]
        else list.push(at)
      }
    }
    const sets = new Uint8Array(this.count)
    for (const out of seenList) for (const set of outputs[out] as number[]) sets[set] = 1
    return { sets, starts }
  }
}
