// Cost of the runtime guard on an ordinary tool call, as a ratio against what the runtime's own
// `read` tool does anyway for the same file, measured side by side in one run. Run after `npx
// tsup`, from the package dir: node bench/run.mjs
// Baseline: open + read of a 4 KiB file (the least the read tool does; it also streams lines,
// counts bytes and records the call, so the real ratio is smaller). Guarded: the plugin's
// `tool.execute.before` for that call, then the same read.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRuntimeGuard } from '../dist/index.js'

const ROUNDS = 7
const SLICE_MS = 300
const base = realpathSync(mkdtempSync(join(tmpdir(), 'runtime-guard-bench-')))
const root = join(base, 'workspace')
const file = join(root, 'packages/app/src/components/widget.ts')
mkdirSync(join(root, 'packages/app/src/components'), { recursive: true })
writeFileSync(file, 'export const x = 1\n'.repeat(215))

const hooks = await createRuntimeGuard({ env: {} })({ directory: root })
await hooks['chat.params']({ sessionID: 'ses_bench', agent: 'remote-full' }, {})

async function plainRead() {
  await readFile(file)
}
async function guardedRead() {
  const output = { args: { filePath: file } }
  await hooks['tool.execute.before']({ tool: 'read', sessionID: 'ses_bench', callID: 'c' }, output)
  await readFile(output.args.filePath)
}
async function hookOnly() {
  await hooks['tool.execute.before'](
    { tool: 'read', sessionID: 'ses_bench', callID: 'c' },
    { args: { filePath: file } },
  )
}

async function slice(run) {
  const start = performance.now()
  let ops = 0
  while (performance.now() - start < SLICE_MS) {
    for (let i = 0; i < 32; i++) await run()
    ops += 32
  }
  return ((performance.now() - start) * 1000) / ops // µs per call
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const run of [plainRead, guardedRead, hookOnly]) await slice(run) // warm up
const results = { plainRead: [], guardedRead: [], hookOnly: [] }
for (let round = 0; round < ROUNDS; round++) {
  // Interleaved, so a busy moment of the machine hits every case alike.
  for (const [name, run] of Object.entries({ plainRead, guardedRead, hookOnly }))
    results[name].push(await slice(run))
}
rmSync(base, { recursive: true, force: true })

const plain = median(results.plainRead)
const guarded = median(results.guardedRead)
const hook = median(results.hookOnly)
console.log('runtime guard: one `read` tool call of a 4 KiB file at depth 5, median of 7 interleaved rounds')
console.log(`  plain open+read         ${plain.toFixed(1)} µs`)
console.log(
  `  guard hook + same read  ${guarded.toFixed(1)} µs   (${(guarded / plain).toFixed(2)}x the plain read)`,
)
console.log(`  guard hook alone        ${hook.toFixed(1)} µs`)
console.log('  (a whole tool call in the runtime takes milliseconds: model round trip, part updates, events)')
