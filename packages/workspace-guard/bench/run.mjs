// Workspace text search vs ripgrep run directly on the same tree, measured side by side in one
// run (warm page cache, median of several runs). Run after `npx tsup`, from the package dir:
//   node bench/run.mjs
// Builds a 50 000-file tree (500 directories x 100 small source files, deterministic content,
// a few needles and a few denied files) in a temp directory and removes it at the end.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWorkspaceGuard } from '../dist/index.js'

const started = Date.now()

const DIRECTORIES = 500
const FILES_PER_DIRECTORY = 100
const NEEDLE = 'zqxNeedle_4242'
const ABSENT = 'absent_token_never_written'
const RIPGREP_RUNS = 9
const GUARD_RUNS = 9
const BUILTIN_RUNS = 3
const GOAL = 2
/** Past this many seconds, contenders get only their minimum of rounds (keeps `pnpm bench` < 60 s on a loaded box). */
const SOFT_LIMIT_S = 40
const MIN_ROUNDS = 3

function findRg() {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = join(dir, 'rg')
    if (spawnSync(candidate, ['--version']).status === 0) return candidate
  }
  return undefined
}

function buildTree(root) {
  let needles = 0
  for (let d = 0; d < DIRECTORIES; d++) {
    const dir = join(root, `pkg${String(d).padStart(3, '0')}`, 'src')
    mkdirSync(dir, { recursive: true })
    for (let f = 0; f < FILES_PER_DIRECTORY; f++) {
      const n = d * FILES_PER_DIRECTORY + f
      const lines = [
        `// module ${n}: generated for the workspace-guard benchmark`,
        `import { helper${n % 97} } from '../common/helper${n % 97}.js'`,
        '',
        `export interface Options${n} {`,
        '  name: string',
        '  retries: number',
        '}',
        '',
        `export function compute${n}(input: Options${n}): number {`,
        `  const base = input.retries * ${n % 13} + input.name.length`,
        `  return helper${n % 97}(base) + ${n}`,
        '}',
        '',
        `export class Service${n} {`,
        '  private cache = new Map<string, number>()',
        '  lookup(key: string): number | undefined {',
        '    return this.cache.get(key)',
        '  }',
        '}',
      ]
      if (n % 7919 === 0) {
        lines.push(`// ${NEEDLE}: find me`)
        needles += 1
      }
      writeFileSync(join(dir, `file${String(f).padStart(3, '0')}.ts`), `${lines.join('\n')}\n`)
    }
  }
  // Denied files holding the needle: the guard must not return them, ripgrep does.
  writeFileSync(join(root, '.env'), `TOKEN=${NEEDLE}\n`)
  mkdirSync(join(root, '.git'))
  writeFileSync(join(root, '.git', 'config'), `${NEEDLE}\n`)
  return needles
}

function runRg(rg, root, query) {
  // Equivalent work: same literal, same case folding, hidden files, no ignore files, same size cap.
  const args = ['--no-config', '--hidden', '--no-ignore', '--max-filesize', String(256 * 1024)]
  args.push('--fixed-strings', '--ignore-case', '--line-number', '--column', '-e', query, '--', '.')
  return new Promise((resolve, reject) => {
    const child = spawn(rg, args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
    let lines = 0
    child.stdout.on('data', (chunk) => {
      for (const byte of chunk) if (byte === 10) lines += 1
    })
    child.on('error', reject)
    child.on('close', () => resolve(lines))
  })
}

/**
 * Times several contenders in interleaved rounds (one run of each per round, after one warm-up
 * run each), so that load changes on a shared machine hit them alike. Returns the median per
 * contender and its last result.
 */
async function interleaved(contenders) {
  const times = contenders.map(() => [])
  const results = []
  for (const [i, { fn }] of contenders.entries()) results[i] = await fn() // warm-up: page cache, JIT
  const rounds = Math.max(...contenders.map((c) => c.runs))
  for (let round = 0; round < rounds; round++) {
    if (round >= MIN_ROUNDS && (Date.now() - started) / 1000 > SOFT_LIMIT_S) break
    for (const [i, { fn, runs }] of contenders.entries()) {
      if (round >= runs) continue
      const start = process.hrtime.bigint()
      results[i] = await fn()
      times[i].push(Number(process.hrtime.bigint() - start) / 1e6)
    }
  }
  return contenders.map((_, i) => {
    const sorted = times[i].sort((a, b) => a - b)
    return { ms: sorted[Math.floor(sorted.length / 2)], runs: sorted.length, result: results[i] }
  })
}

const ms = (value) => `${value.toFixed(0)} ms`.padStart(8)

const rg = findRg()
if (rg === undefined) {
  console.log('workspace-guard: no `rg` on PATH (scripts/install-system-deps.sh installs it); skipped')
  process.exit(0)
}
const root = mkdtempSync(join(tmpdir(), 'workspace-guard-bench-'))
try {
  const began = Date.now()
  const needles = buildTree(root)
  console.log(
    `tree: ${DIRECTORIES * FILES_PER_DIRECTORY} files, ${needles} needles (built in ${Date.now() - began} ms)`,
  )
  const viaRipgrep = createWorkspaceGuard({ root, ripgrepPath: rg })
  const builtin = createWorkspaceGuard({ root, ripgrepPath: false, timeBudgetMs: 60_000 })
  const rows = []
  for (const [label, query] of [
    ['rare literal', NEEDLE],
    ['absent literal', ABSENT],
  ]) {
    const [direct, guard, fallback] = await interleaved([
      { runs: RIPGREP_RUNS, fn: () => runRg(rg, root, query) },
      { runs: GUARD_RUNS, fn: () => viaRipgrep.search({ mode: 'text', query, limit: 20 }) },
      { runs: BUILTIN_RUNS, fn: () => builtin.search({ mode: 'text', query, limit: 20 }) },
    ])
    rows.push({ label, direct, guard, fallback })
  }
  console.log('\ntext search        rg direct   guard(rg)  ratio   guard(built-in)  ratio')
  for (const { label, direct, guard, fallback } of rows) {
    const ratio = guard.ms / direct.ms
    const fallbackRatio = fallback.ms / direct.ms
    console.log(
      `${label.padEnd(16)} ${ms(direct.ms)}   ${ms(guard.ms)}  ${ratio.toFixed(2)}x  ${ms(fallback.ms)}         ${fallbackRatio.toFixed(2)}x`,
    )
    console.log(
      `${''.padEnd(16)} rg lines: ${direct.result}, guard matches: ${guard.result.matches.length}, built-in matches: ${fallback.result.matches.length} (median of ${direct.runs}/${guard.runs}/${fallback.runs} runs)`,
    )
  }
  const worst = Math.max(...rows.map((row) => row.guard.ms / row.direct.ms))
  console.log(
    `\nguard(rg) vs ripgrep: worst ratio ${worst.toFixed(2)}x (goal <= ${GOAL}x): ${worst <= GOAL ? 'met' : 'NOT met'}`,
  )
  const [files, symbols] = await interleaved([
    { runs: 3, fn: () => viaRipgrep.search({ mode: 'files', query: 'file042', limit: 20 }) },
    { runs: 3, fn: () => viaRipgrep.search({ mode: 'symbols', query: 'Service4242', limit: 20 }) },
  ])
  console.log(`for reference (guard, rg engine): files ${ms(files.ms)}, symbols ${ms(symbols.ms)}`)
} finally {
  rmSync(root, { recursive: true, force: true })
}
console.log(`bench: ${((Date.now() - started) / 1000).toFixed(1)} s`)
