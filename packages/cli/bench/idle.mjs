// Idle memory of `sallyport up` (`pnpm bench:idle`): a fresh default stack (`sallyport init`, no
// model provider: the first run), started with `up`; its process (the gateway and the supervisor)
// sampled while nothing happens. Reports RSS at 2 s after `ready` (start-up's peak) and at 15 s
// (after V8's memory reducer, which runs some seconds after start-up), and how the 15 s RSS
// splits: pages of the node binary itself (file-backed, shared with every node process) and the
// process's own anonymous memory. Loopback only, about 40 s.
//
//   node bench/idle.mjs [--serve] [--rounds 3] [--seconds 30] [--node-flags "--optimize-for-size"]
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { BIN, newStack } from './fault-scenarios.mjs'

const argv = process.argv.slice(2)
const ROUNDS = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : 3
/** Seconds after `ready` at which the idle RSS is taken. */
const SECONDS = argv.includes('--seconds') ? Number(argv[argv.indexOf('--seconds') + 1]) : 30
/** Measure `serve` (the gateway alone) instead of `up` (the gateway and the supervisor). */
const SERVE = argv.includes('--serve')
/** Node flags for the `up` process, to compare (`--node-flags "--max-semi-space-size=1"`). */
const NODE_FLAGS = argv.includes('--node-flags')
  ? argv[argv.indexOf('--node-flags') + 1].split(/\s+/).filter(Boolean)
  : []
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** RSS (MiB) of `pid`, and the part of it in file-backed pages of the node binary. */
function memoryOf(pid) {
  let rssKiB = 0
  let binaryKiB = 0
  let current = ''
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (mapping) current = mapping[1] ?? ''
    else if (line.startsWith('Rss:')) {
      const kib = Number(line.split(/\s+/)[1])
      rssKiB += kib
      if (current === process.execPath) binaryKiB += kib
    }
  }
  return {
    rss: round(rssKiB / 1024),
    nodeBinary: round(binaryKiB / 1024),
    own: round((rssKiB - binaryKiB) / 1024),
  }
}
const round = (n) => Math.round(n * 10) / 10

/** Starts `sallyport <args>` (stopped by `cleanups`) and resolves once it logged `ready`. */
async function startReady(args, cleanups) {
  const child = spawn(process.execPath, [...NODE_FLAGS, BIN, ...args, '--log-format', 'json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  cleanups.unshift(async () => {
    child.kill('SIGTERM')
    await exited
  })
  let output = ''
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('"event":"ready"')) resolve()
    })
    child.stderr.on('data', (chunk) => {
      output += chunk
    })
    exited.then((code) =>
      reject(new Error(`${args[0]} exited (${code}) before ready: ${output.slice(-500)}`)),
    )
  })
  return child
}

async function oneRound() {
  const cleanups = []
  try {
    const stack = await newStack(undefined, cleanups)
    const child = await startReady(['up', '--dir', stack.dir], cleanups)
    // `serve`: the gateway alone, in a process of its own, in front of the runtime `up` started.
    const measured = SERVE ? await startReady(['serve', '--dir', stack.dir, '--port', '0'], cleanups) : child
    const series = []
    for (let s = 1; s <= SECONDS; s++) {
      await sleep(1_000)
      series.push(memoryOf(measured.pid).rss)
    }
    return { atTwoSeconds: series[1], idle: memoryOf(measured.pid), series }
  } finally {
    for (const cleanup of cleanups) await cleanup()
  }
}

const rounds = []
for (let i = 0; i < ROUNDS; i++) rounds.push(await oneRound())
console.log(JSON.stringify({ rounds }, null, 1))
const idle = rounds.map((r) => r.idle.rss).sort((a, b) => a - b)
const median = (xs) => xs[Math.floor(xs.length / 2)]
console.log(
  `idle: sallyport ${SERVE ? 'serve' : 'up'} RSS ${median(rounds.map((r) => r.atTwoSeconds).sort((a, b) => a - b))} MiB 2 s after ready, ${median(idle)} MiB at 15 s (range ${idle[0]}–${idle.at(-1)}); of it the node binary's own pages ${median(rounds.map((r) => r.idle.nodeBinary).sort((a, b) => a - b))} MiB, the process's own memory ${median(rounds.map((r) => r.idle.own).sort((a, b) => a - b))} MiB`,
)
