import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { extractSymbols, languageOf } from './extract-symbols.ts'
import { SYMBOL_LANGUAGES } from './symbol-rules.ts'

// The symbol rules run on every line of every candidate file, on the event loop: a pattern that
// backtracks super-linearly lets one crafted line block the server for minutes, and no time
// budget can interrupt a running regular expression. These lines are built to hit the
// ambiguous spots (runs of whitespace between optional parts, repeated tokens).
const N = 200_000
const fill = (unit: string): string => unit.repeat(Math.ceil(N / unit.length)).slice(0, N)
const ADVERSARIAL: readonly string[] = [
  `${fill(' ')}!`,
  `${fill('\t')}!`,
  `a${fill(' ')}!`,
  `*${fill(' ')}!`,
  `a?${fill(' ')}!`,
  `static${fill(' ')}!`,
  `static async${fill(' ')}!`,
  `function${fill(' ')}!`,
  `const a = ${fill(' ')}!`,
  `const a: ${fill('a: ')}!`,
  `a${fill(' ')}<${fill(' ')}>${fill(' ')}!`,
  `public static final a${fill(' ')}!`,
  `public static final a${fill(' a')}!`,
  `public static final ${fill('a, ')}!`,
  `public ${fill('x<')}!`,
  `public x<${fill('> a ')}!`,
  `@a${fill(' @a')}!`,
  `A() throws${fill(' ')}!`,
  `A() throws a${fill(', a ')}!`,
  `A() {${fill(' ')}!`,
  `impl<${fill('> a<')}!`,
  `impl<T> a<${fill('> for ')}!`,
  `pub extern${fill(' ')}!`,
  `func (${fill(' ')}!`,
  `type a${fill(' ')}!`,
]

/** Runs every rule of every language on every line in a worker; false if not done by the deadline. */
function runRulesWithin(deadlineMs: number): Promise<boolean> {
  const patterns = SYMBOL_LANGUAGES.flatMap((language) => [
    ...language.rules.map((rule) => [rule.pattern.source, rule.pattern.flags]),
    [language.comment.source, language.comment.flags],
  ])
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads')
     for (const [source, flags] of workerData.patterns) {
       const pattern = new RegExp(source, flags)
       for (const line of workerData.lines) pattern.exec(line)
     }
     parentPort.postMessage('done')`,
    { eval: true, workerData: { patterns, lines: ADVERSARIAL } },
  )
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate()
      resolve(false)
    }, deadlineMs)
    worker.once('message', () => {
      clearTimeout(timer)
      void worker.terminate()
      resolve(true)
    })
    worker.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
  })
}

describe('symbol rules: adversarial lines', () => {
  it('every rule handles 200 000-character crafted lines in linear time (2 s deadline)', async () => {
    expect(await runRulesWithin(2_000)).toBe(true)
  })

  it('extractSymbols gets through such lines at member and top-level positions', () => {
    // Only reached when the rules themselves are linear (the test above).
    const containers: Record<string, string> = {
      'a.ts': 'class A {',
      'a.py': 'class A:',
      'a.go': 'const (',
      'a.rs': 'impl A {',
      'A.java': 'class A {',
    }
    for (const [path, opener] of Object.entries(containers)) {
      const language = languageOf(path)
      if (language === undefined) throw new Error(path)
      const source = [opener, ...ADVERSARIAL.map((line) => `  ${line}`), ...ADVERSARIAL].join('\n')
      const started = performance.now()
      extractSymbols(source, language)
      expect(performance.now() - started).toBeLessThan(2_000)
    }
  })

  it('keeps the method forms the rewritten TypeScript pattern must still match', () => {
    const source = [
      'class A {',
      '  foo?<T>(x: T) {}',
      '  static async *gen() {}',
      '  #priv!() {}',
      '  get x () {}',
      '  public  bar <T> (a) {}',
      '}',
      'export default async function *  stream() {}',
    ].join('\n')
    const language = languageOf('a.ts')
    if (language === undefined) throw new Error('ts')
    expect(
      extractSymbols(source, language).map((hit) => `${hit.line}:${hit.column} ${hit.kind} ${hit.name}`),
    ).toEqual([
      '1:7 class A',
      '2:3 method foo',
      '3:17 method gen',
      '4:3 method #priv',
      '5:7 method x',
      '6:11 method bar',
      '8:34 function stream',
    ])
  })

  it('keeps Java constants with spaced generic types and constructors with throws clauses', () => {
    const source = [
      'class A {',
      '  private static final Map<String, List<Integer>> BY_NAME = new HashMap<>();',
      '  static final int[] SIZES = {1};',
      '  A(int x) throws IOException, java.io.UncheckedIOException {',
      '  A() {}',
      '}',
    ].join('\n')
    const language = languageOf('A.java')
    if (language === undefined) throw new Error('java')
    expect(
      extractSymbols(source, language).map((hit) => `${hit.line}:${hit.column} ${hit.kind} ${hit.name}`),
    ).toEqual(['1:7 class A', '2:51 constant BY_NAME', '3:22 constant SIZES', '4:3 method A', '5:3 method A'])
  })
})
