// Required literals of a regular expression, the prefilter of RE2 and of code-search indexes
// (Cox, "Regular Expression Matching with a Trigram Index", 2012): sets of strings such that
// every match of the pattern contains at least one string of each set. Where a set has none of
// its strings in a text, the pattern cannot match there and is not run. The screen's patterns are
// long alternations that a backtracking engine tries at every position; most texts lack the words
// they need, and one pass that proves it is far cheaper than the attempt.
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
  const parser = new Parser(pattern.source, pattern.flags.includes('u'))
  const info = toRequirement(parser.parse())
  if (info.kind !== 'req' || info.sets.length === 0) return undefined
  return info.sets.map(reduce)
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

class Parser {
  private i = 0
  constructor(
    private readonly src: string,
    private readonly unicode: boolean,
  ) {}

  parse(): Info {
    const info = this.alternation()
    if (this.i !== this.src.length) throw new SyntaxError(`prefilter: unexpected ')' at ${this.i}`)
    return info
  }

  private alternation(): Info {
    const branches = [this.sequence()]
    while (this.src[this.i] === '|') {
      this.i++
      branches.push(this.sequence())
    }
    return branches.length === 1 ? (branches[0] as Info) : union(branches)
  }

  private sequence(): Info {
    const pieces: Info[] = []
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atom = this.atom()
      pieces.push(...this.quantified(atom))
    }
    return pieces.length === 0 ? EMPTY : concat(pieces)
  }

  /** The atom with the quantifier that follows it, as pieces of the sequence. */
  private quantified(atom: Info): Info[] {
    const c = this.src[this.i]
    let min: number
    let max: number
    if (c === '?' || c === '*' || c === '+') {
      this.i++
      min = c === '+' ? 1 : 0
      max = c === '?' ? 1 : Number.POSITIVE_INFINITY
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i))
      if (!m) return [atom]
      this.i += m[0].length
      min = Number(m[1])
      max = m[2] === undefined ? min : m[3] === '' ? Number.POSITIVE_INFINITY : Number(m[3])
    } else return [atom]
    if (this.src[this.i] === '?') this.i++ // lazy: the same strings
    // `x{2,}` of a fixed string: `xx` and then an unknown number more (keeps `ab+c` needing "ab").
    if (atom.kind === 'exact' && min > 0 && max > min) return [repeat(atom, min, min), ANY]
    return [repeat(atom, min, max)]
  }

  /** One literal character of the source: a whole code point in a Unicode pattern. */
  private literal(): string {
    const cp = this.unicode ? (this.src.codePointAt(this.i) as number) : this.src.charCodeAt(this.i)
    const ch = this.unicode ? String.fromCodePoint(cp) : String.fromCharCode(cp)
    this.i += ch.length
    return ch
  }

  private atom(): Info {
    const c = this.src[this.i] as string
    if (!'([.^$\\'.includes(c)) return exact(this.literal())
    this.i++
    switch (c) {
      case '(':
        return this.group()
      case '[':
        return this.characterClass()
      case '.':
        return ANY
      case '^':
      case '$':
        return EMPTY
      default:
        return this.escape()
    }
  }

  private group(): Info {
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
    return assertion ? EMPTY : inner
  }

  private characterClass(): Info {
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
    if (negated || wide || members.size === 0 || members.size > MAX_CLASS) return ANY
    return { kind: 'exact', set: members }
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

  private escape(): Info {
    const c = this.src[this.i] as string
    if (c === 'b' || c === 'B') {
      this.i++
      return EMPTY
    }
    if (/[1-9]/.test(c)) {
      // A back-reference: some earlier text again, not known here.
      while (/[0-9]/.test(this.src[this.i] ?? '')) this.i++
      return ANY
    }
    if (c === 'k' && this.src[this.i + 1] === '<') {
      this.i = this.src.indexOf('>', this.i) + 1
      return ANY
    }
    const ch = this.characterEscape()
    return ch === undefined ? ANY : exact(ch)
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

const exact = (s: string): Info => ({ kind: 'exact', set: new Set([s]) })

/**
 * Finds, in one pass over a text, which of several literal sets have a member in it (Aho and
 * Corasick, "Efficient string matching", 1975): a deterministic automaton over every literal of
 * every set, its alphabet reduced to the characters the literals use. Linear in the text.
 *
 * @example
 * const index = new LiteralIndex([['password', 'token'], ['curl']])
 * index.scan('print the token') // Uint8Array [1, 0]
 */
export class LiteralIndex {
  /** Character code (below 128) → alphabet index; 0 is every character no literal uses. */
  private readonly ascii = new Uint8Array(128)
  /** The same for characters from 128 up. */
  private readonly wide = new Map<number, number>()
  private readonly width: number
  /** state × alphabet → next state. */
  private readonly next: Uint32Array
  /** state → index in `outputs` of the sets it completes a literal of (0: none). */
  private readonly output: Uint32Array
  private readonly outputs: number[][] = [[]]
  private readonly count: number

  constructor(sets: readonly (readonly string[])[]) {
    this.count = sets.length
    let letters = 1
    const letter = (code: number): number => {
      if (code < 128) {
        if (this.ascii[code] === 0) this.ascii[code] = letters++
        return this.ascii[code] as number
      }
      let at = this.wide.get(code)
      if (at === undefined) {
        at = letters++
        this.wide.set(code, at)
      }
      return at
    }
    // The trie of every literal; `ends` holds the sets each state completes a literal of.
    const children: Array<Map<number, number>> = [new Map()]
    const ends: Array<Set<number>> = [new Set()]
    sets.forEach((literals, set) => {
      for (const literal of literals) {
        let state = 0
        for (let i = 0; i < literal.length; i++) {
          const a = letter(literal.charCodeAt(i))
          let child = children[state]?.get(a)
          if (child === undefined) {
            child = children.length
            children.push(new Map())
            ends.push(new Set())
            children[state]?.set(a, child)
          }
          state = child
        }
        ends[state]?.add(set)
      }
    })
    if (letters > 255) throw new RangeError('LiteralIndex: more than 254 distinct characters')
    this.width = letters
    const states = children.length
    this.next = new Uint32Array(states * letters)
    this.output = new Uint32Array(states)
    // Breadth first: each state's failure state is complete before the state itself.
    const fail = new Uint32Array(states)
    const queue: number[] = []
    for (let a = 0; a < letters; a++) {
      const child = children[0]?.get(a) ?? 0
      this.next[a] = child
      if (child !== 0) queue.push(child)
    }
    const merged: Array<Set<number>> = ends.map((e) => new Set(e))
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head] as number
      for (const set of merged[fail[state] as number] as Set<number>) merged[state]?.add(set)
      for (let a = 0; a < letters; a++) {
        const child = children[state]?.get(a)
        const fallback = this.next[(fail[state] as number) * letters + a] as number
        if (child === undefined) this.next[state * letters + a] = fallback
        else {
          this.next[state * letters + a] = child
          fail[child] = fallback
          queue.push(child)
        }
      }
      const found = merged[state] as Set<number>
      if (found.size > 0) {
        this.output[state] = this.outputs.length
        this.outputs.push([...found])
      }
    }
  }

  /** For each set (in constructor order): 1 when one of its literals occurs in `text`. */
  scan(text: string): Uint8Array {
    const hit = new Uint8Array(this.count)
    const { ascii, wide, width, next, output, outputs } = this
    let state = 0
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      const a = code < 128 ? (ascii[code] as number) : (wide.get(code) ?? 0)
      state = next[state * width + a] as number
      const out = output[state] as number
      if (out !== 0) for (const set of outputs[out] as number[]) hit[set] = 1
    }
    return hit
  }
}
