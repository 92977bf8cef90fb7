import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { normalizeForScreen, type ScreenView } from './normalize.js'
import { LiteralIndex, requiredLiterals, startLiterals } from './prefilter.js'
import { SCREEN_RULES } from './screen-rules.js'

// The prefilter may only ever skip a pattern that cannot match: every match of a pattern must
// contain one of its required literals. Checked on small patterns whose answer is known, on
// strings generated from every rule's own pattern, and on every corpus input.

describe('requiredLiterals', () => {
  it.each([
    [/password/, [['password']]],
    [
      /(?:tell ?me|show) (?:the )?password/,
      [
        [
          'show password',
          'tellme password',
          'tell me password',
          'show the password',
          'tellme the password',
          'tell me the password',
        ],
      ],
    ],
    [/(?:tell ?me|show) [a-z]+ password/, [['show ', 'tellme ', 'tell me '], [' password']]],
    [/\bcat ?(?:\.env|id_rsa)/, [['cat.env', 'cat .env', 'catid_rsa', 'cat id_rsa']]],
    [
      /(?:curl|wget)\b[^\n]{0,40}?https?:\/\//,
      [
        ['http://', 'https://'],
        ['curl', 'wget'],
      ],
    ],
    [/a(?=bc)d/, [['ad']]],
    [/(?<!csrf )token/, [['token']]],
    [/x[ab]y/, [['xay', 'xby']]],
    [/ab+c/, [['ab'], ['c']]],
    [/(?:ab){2}/, [['abab']]],
    [/\x41\u0042/, [['AB']]],
    [/忽略|無視/u, [['忽略', '無視']]],
    [/(?:key|token)s?\b/, [['key', 'token']]],
    // One set per branch of an alternation: its most selective one.
    [/send [a-z]+ secrets|curl/, [['curl', ' secrets']]],
  ] as const)('%s needs a string of each of %j', (pattern, expected) => {
    const sorted = (sets: readonly (readonly string[])[]) =>
      sets.map((set) => [...set].sort()).sort((a, b) => (a.join() < b.join() ? -1 : 1))
    expect(sorted(requiredLiterals(pattern) ?? [])).toEqual(sorted(expected))
  })

  it.each([
    [/a*/, 'may match nothing'],
    [/(?:abc)?/, 'may match nothing'],
    [/[a-z]{3}/, 'a wide class'],
    [/.+/, 'any character'],
    [/\p{L}{8}/u, 'a property class'],
    [/password/i, 'case-insensitive patterns are not analysed'],
    [/ab|c*/, 'one branch may match nothing'],
  ])('%s has no prefilter (%s)', (pattern) => {
    expect(requiredLiterals(pattern)).toBeUndefined()
  })

  it('knows nothing of a back-reference, and still what the group needs', () => {
    expect(requiredLiterals(/(a)\1/)).toEqual([['a']])
  })

  it('never requires anything of an optional or repeated part', () => {
    // `b*` may be absent or repeated: "ac" and "abbc" both match, so neither "abc" nor "ac" is required.
    expect(requiredLiterals(/ab*c/)).toEqual([['a'], ['c']])
    for (const text of ['ac', 'abc', 'abbbc']) expect(/ab*c/.test(text)).toBe(true)
  })

  it('reads an astral character as one code point in a Unicode pattern (`😀?` may be absent)', () => {
    expect(requiredLiterals(/x😀?y/u)).toEqual([['xy', 'x😀y']])
  })
})

/**
 * The pattern without its assertions (lookarounds, `\b`, `^`, `$`): it matches every string the
 * pattern matches (and more), and it has the same required literals, since assertions consume
 * nothing. fast-check can generate strings for it.
 */
function withoutAssertions(source: string): string {
  let out = ''
  let i = 0
  let inClass = false
  while (i < source.length) {
    const c = source[i] as string
    if (c === '\\') {
      const next = source[i + 1]
      if (!inClass && (next === 'b' || next === 'B')) {
        i += 2
        continue
      }
      out += c + (next ?? '')
      i += 2
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      out += c
      i++
      continue
    }
    if (c === '[') {
      inClass = true
      out += c
      i++
      continue
    }
    if (c === '^' || c === '$') {
      i++
      continue
    }
    if (c === '(' && /^\(\?(?:=|!|<=|<!)/.test(source.slice(i))) {
      // Skip the whole assertion group.
      let depth = 0
      let klass = false
      for (; i < source.length; i++) {
        const d = source[i]
        if (d === '\\') {
          i++
          continue
        }
        if (klass) {
          if (d === ']') klass = false
          continue
        }
        if (d === '[') klass = true
        else if (d === '(') depth++
        else if (d === ')' && --depth === 0) break
      }
      i++
      continue
    }
    out += c
    i++
  }
  return out
}

const gatedPatterns = SCREEN_RULES.flatMap((rule) => {
  const test = rule.test
  const patterns = test.kind === 'pattern' ? [test.pattern] : test.kind === 'all' ? test.patterns : []
  return patterns.flatMap((pattern, i) => {
    const sets = requiredLiterals(pattern)
    return sets
      ? [{ id: `${rule.id}#${i}`, pattern, sets, views: test.kind === 'signal' ? [] : test.views }]
      : []
  })
})

describe('the prefilters of the screen rules', () => {
  it('most patterns have one (the screen relies on them for its speed)', () => {
    const patterns = SCREEN_RULES.flatMap((r) =>
      r.test.kind === 'pattern' ? [r.test.pattern] : r.test.kind === 'all' ? r.test.patterns : [],
    )
    expect(gatedPatterns.length).toBeGreaterThanOrEqual(patterns.length - 2)
  })

  it.each(gatedPatterns.map((g) => [g.id, g] as const))(
    '%s: every string its pattern matches holds a string of each required set',
    (_id, { pattern, sets }) => {
      const loose = new RegExp(withoutAssertions(pattern.source), pattern.flags)
      fc.assert(
        fc.property(fc.stringMatching(loose), (text) => {
          // The loose pattern matches more than the rule; its strings must all hold a literal of each set.
          for (const set of sets)
            expect(
              set.some((l) => text.includes(l)),
              JSON.stringify(set),
            ).toBe(true)
        }),
        { numRuns: 300 },
      )
    },
  )

  it('on every corpus input, a pattern that matches a view finds a string of each required set in it', () => {
    const read = (name: string): Array<{ text: string }> =>
      JSON.parse(readFileSync(new URL(`../../test/moderation-corpus/${name}`, import.meta.url), 'utf8'))
    const texts = [...read('benign.json'), ...read('hostile.json')].map((e) => e.text)
    let matched = 0
    for (const text of texts) {
      const n = normalizeForScreen(text)
      for (const { pattern, sets, views } of gatedPatterns)
        for (const view of views as ScreenView[]) {
          if (!pattern.test(n[view])) continue
          matched++
          for (const set of sets)
            expect(
              set.some((l) => n[view].includes(l)),
              `${pattern.source.slice(0, 60)}`,
            ).toBe(true)
        }
    }
    expect(matched).toBeGreaterThan(200)
  })
})

describe('startLiterals', () => {
  it.each([
    [/password/, ['password']],
    [/\b(?:ignore|forget)\b/, ['forget', 'ignore']],
    // Cut to their first 8 characters.
    [
      /\b(?:ignore|forget) ?(?:all )?previous/,
      ['forget a', 'forget p', 'forgetal', 'forgetpr', 'ignore a', 'ignore p', 'ignoreal', 'ignorepr'],
    ],
    [/(?:tell ?me|show) (?:the )?password/, ['show the', 'show pas', 'tell me ', 'tellme p', 'tellme t']],
    [/(?<![^\s])(?:[.-] |[.-][.-]{1,5} )/, ['- ', '--', '-.', '. ', '.-', '..']],
    [/(?<=\b[a-z]{1,20})(?:way|ay)\b/, ['ay', 'way']],
    [/(?:ab){2}c/, ['ababc']],
    [/a+b/, ['a']],
    [/x?y/, ['xy', 'y']],
    [/忽略|無視/u, ['忽略', '無視']],
  ] as const)('every match of %s begins with one of %j', (pattern, expected) => {
    expect([...(startLiterals(pattern) ?? [])].sort()).toEqual([...expected].sort())
  })

  it.each([
    [/[a-z]+x/, 'a wide class'],
    [/.+x/, 'any character'],
    [/a*b/, 'may begin with `b` or `a`, and `a*` is not analysed'],
    [/(?:foo)?\s/, 'may begin with a blank'],
    [/ab|c*/, 'one branch may match nothing'],
    [/password/i, 'case-insensitive patterns are not analysed'],
  ])('%s has none (%s)', (pattern) => {
    expect(startLiterals(pattern)).toBeUndefined()
  })

  const matchesFound = new Map<string, number>()
  it.each(
    SCREEN_RULES.flatMap((rule) => {
      const test = rule.test
      const patterns = test.kind === 'pattern' ? [test.pattern] : test.kind === 'all' ? test.patterns : []
      return patterns.flatMap((pattern, i) => {
        const starts = startLiterals(pattern)
        return starts ? [[`${rule.id}#${i}`, pattern, starts] as const] : []
      })
    }),
  )(
    '%s: every match found in strings its pattern generates begins with a start literal',
    (_id, pattern, starts) => {
      const loose = new RegExp(withoutAssertions(pattern.source), pattern.flags)
      const global = new RegExp(pattern.source, `${pattern.flags}g`)
      let matches = 0
      fc.assert(
        fc.property(fc.stringMatching(loose), fc.string({ maxLength: 3 }), (core, before) => {
          const text = before + core
          for (const match of text.matchAll(global)) {
            matches++
            expect(
              starts.some((literal) => text.startsWith(literal, match.index)),
              JSON.stringify(text.slice(match.index, match.index + 30)),
            ).toBe(true)
          }
        }),
        { numRuns: 200 },
      )
      matchesFound.set(_id, matches)
    },
  )

  it('those strings held matches of nearly every pattern (lookarounds the generator ignores rule out the rest)', () => {
    const none = [...matchesFound].filter(([, count]) => count === 0).map(([id]) => id)
    expect(matchesFound.size).toBeGreaterThan(40)
    expect(none.length, none.join(', ')).toBeLessThanOrEqual(3)
  })
})

describe('LiteralIndex', () => {
  it('finds where the literals of each start group begin, like a search for each literal', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', ' ', 'é', '忽')
    const word = fc.array(alphabet, { minLength: 1, maxLength: 3 }).map((cs) => cs.join(''))
    fc.assert(
      fc.property(
        fc.array(fc.array(word, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.array(word, { minLength: 1, maxLength: 4 }), { maxLength: 4 }),
        fc.array(alphabet, { maxLength: 30 }).map((cs) => cs.join('')),
        (sets, groups, text) => {
          const found = new LiteralIndex(sets, groups).search(text)
          expect([...found.sets]).toEqual(sets.map((set) => (set.some((l) => text.includes(l)) ? 1 : 0)))
          groups.forEach((literals, group) => {
            const expected = new Set<number>()
            for (const literal of literals)
              for (let at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + 1))
                expected.add(at)
            expect(new Set(found.starts[group] ?? [])).toEqual(expected)
          })
        },
      ),
      { numRuns: 500 },
    )
  })

  it('finds which sets have a literal in a text, like a search for each literal', () => {
    const alphabet = fc.constantFrom('a', 'b', 'c', ' ', 'é', '忽', '😀')
    const word = fc.array(alphabet, { minLength: 1, maxLength: 4 }).map((cs) => cs.join(''))
    fc.assert(
      fc.property(
        fc.array(fc.array(word, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
        fc.array(alphabet, { maxLength: 40 }).map((cs) => cs.join('')),
        (sets, text) => {
          const hit = new LiteralIndex(sets).scan(text)
          expect([...hit]).toEqual(sets.map((set) => (set.some((l) => text.includes(l)) ? 1 : 0)))
        },
      ),
      { numRuns: 500 },
    )
  })

  it('keeps working past 65 536 states, where its table needs 32-bit entries', () => {
    // 300 pseudo-random literals of 240 letters (a fixed linear congruential sequence): they share
    // little more than a first letter or two, so the trie has about 72 000 states.
    let seed = 12345
    const nextLetter = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return 'abcdefghijklmnopqrstuvwxyz'[seed % 26]
    }
    const literals = Array.from({ length: 300 }, () => Array.from({ length: 240 }, nextLetter).join(''))
    const literal = (k: number) => literals[k] as string
    const sets = Array.from({ length: 300 }, (_, k) => [literal(k)])
    const index = new LiteralIndex(sets, [[literal(299)]])
    for (const k of [0, 150, 298, 299]) {
      const text = `xx${literal(k)}yy`
      const found = index.search(text)
      expect([...found.sets].flatMap((hit, set) => (hit ? [set] : []))).toEqual(
        sets.flatMap(([l], set) => (text.includes(l as string) ? [set] : [])),
      )
      expect(found.starts[0]).toEqual(k === 299 ? [2] : undefined)
    }
    expect([...index.scan(literal(42).slice(0, 239))].some((hit) => hit === 1)).toBe(false)
  })

  it('reports overlapping and nested literals (a literal inside another, a suffix of another)', () => {
    const index = new LiteralIndex([['she'], ['he'], ['hers'], ['x']])
    expect([...index.scan('ushers')]).toEqual([1, 1, 1, 0])
  })
})
