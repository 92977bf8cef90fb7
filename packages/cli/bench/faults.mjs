// The fault harness (`pnpm bench:faults`, issue 18 "survive faults, and show it"): runs the fault
// scenarios of fault-scenarios.mjs (the same ones the CI tests run: test/faults-*.e2e.test.ts)
// against the REAL processes — the built CLI, the pinned opencode runtime, the scripted model —
// a few times each, loopback only, bounded in time and count, and prints what it measured:
// one JSON object, then one line per figure. Exits 1 when any promise was broken (the same
// judgement as the tests), or when the whole run passed its time bound.
//
//   node packages/cli/bench/faults.mjs              # 3 kills per child, 2 moderator hangs,
//                                                   # 2 runtime deaths, the disk sweep (≈ 10 min)
//   node packages/cli/bench/faults.mjs --smoke      # each once, a shorter disk sweep (≈ 4 min)
//   node packages/cli/bench/faults.mjs --only child,disk --repeat 5
//
// Scenarios: `child` (SIGKILL of each process under `up`: time to up's exit, its exit code, what
// is left), `moderator` (the moderator runtime stopped with SIGSTOP under `up`), `serve` (the
// runtime behind `serve` killed mid-turn and started again on its port), `disk` (credential
// commands on a full or read-only state directory: a tmpfs, so root or a user namespace).
import { startModelServer } from '@sallyport/testkit'
import {
  childDeath,
  diskFaults,
  moderatorHang,
  newStack,
  problemsOfChildDeath,
  problemsOfDiskFault,
  problemsOfModeratorHang,
  problemsOfRuntimeRestart,
  runtimeRestart,
} from './fault-scenarios.mjs'

const argv = process.argv.slice(2)
const option = (name) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined)
const smoke = argv.includes('--smoke')
const SCENARIOS = ['child', 'moderator', 'serve', 'disk']
const only = (option('only') ?? SCENARIOS.join(',')).split(',')
for (const name of only) if (!SCENARIOS.includes(name)) throw new Error(`--only: unknown scenario ${name}`)
const repeat = Number(option('repeat') ?? (smoke ? 1 : 0)) || undefined
const RUNS = {
  child: repeat ?? 3,
  moderator: repeat ?? 2,
  serve: repeat ?? 2,
}
const MAX_MINUTES = Number(option('max-minutes') ?? (smoke ? 15 : 40))

// The whole run is bounded: past the bound it stops (the scenarios' processes and mounts are
// cleaned up by their exit hooks) and fails.
const bound = setTimeout(() => {
  process.stderr.write(`faults: stopped after ${MAX_MINUTES} minutes (--max-minutes)\n`)
  process.exit(1)
}, MAX_MINUTES * 60_000)
bound.unref()
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130))

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}
const spread = (values) =>
  values.length === 0
    ? 'none'
    : `median ${median(values)} ms, max ${Math.max(...values)} ms (n=${values.length})`
const lines = []
const say = (line) => lines.push(`faults ${line}`)
const problems = []
const figures = {}
const startedAt = Date.now()

const model = await startModelServer()
const cleanups = []
try {
  if (only.includes('child')) {
    const stack = await newStack(model, cleanups)
    figures.child = {}
    for (const child of ['assistant', 'moderator', 'scheduler']) {
      const runs = []
      for (let i = 0; i < RUNS.child; i++) {
        const result = await childDeath({ model, child, stack })
        runs.push(result)
        problems.push(...problemsOfChildDeath(result).map((p) => `child ${child}: ${p}`))
      }
      figures.child[child] = {
        exitCodes: [...new Set(runs.map((r) => r.exitCode))],
        deathToExitMs: runs.map((r) => r.deathToExitMs),
        processesChecked: runs.map((r) => r.processes),
        left: runs.reduce((n, r) => n + r.survivors.length + r.survivorsAtExit.length, 0),
        portsOpen: runs.reduce((n, r) => n + r.openPortsAtExit.length, 0),
        stderr: runs[0]?.stderr.trim(),
      }
      const f = figures.child[child]
      say(
        `child ${child} SIGKILL -> up exit ${f.exitCodes.join('/')} after ${spread(f.deathToExitMs)}; ` +
          `${f.left} processes left, ${f.portsOpen} ports open; "${f.stderr}"`,
      )
    }
  }

  if (only.includes('moderator')) {
    const runs = []
    for (let i = 0; i < RUNS.moderator; i++) {
      const result = await moderatorHang({ model, deadlineMs: 5_000 })
      runs.push(result)
      problems.push(...problemsOfModeratorHang(result).map((p) => `moderator: ${p}`))
    }
    figures.moderator = {
      deadlineMs: 5_000,
      suspicious: runs.map((r) => r.blocked.answer),
      suspiciousMs: runs.map((r) => r.blocked.ms),
      ordinary: runs.map((r) => r.ordinary.status),
      ordinaryMs: runs.map((r) => r.ordinary.ms),
      ordinaryBeforeMs: runs.map((r) => r.baseline.ms),
      healthMs: runs.map((r) => r.healthHung.ms),
      health: runs.map((r) => `${r.healthHung.status} moderator=${r.healthHung.moderator}`),
      healthCommandExit: runs.map((r) => r.healthCommandExit),
      recoverMs: runs.map((r) => r.recoverMs ?? -1),
    }
    const f = figures.moderator
    say(
      `moderator hung (SIGSTOP) -> suspicious input ${f.suspicious.join('/')} after ${spread(f.suspiciousMs)} (deadline 5000 ms)`,
    )
    say(
      `moderator hung -> ordinary run ${f.ordinary.join('/')} in ${spread(f.ordinaryMs)} (before the hang: ${spread(f.ordinaryBeforeMs)})`,
    )
    say(
      `moderator hung -> /health ${f.health.join(', ')} in ${spread(f.healthMs)}; sallyport health exit ${f.healthCommandExit.join('/')}`,
    )
    say(`moderator continued (SIGCONT) -> suspicious input allowed again after ${spread(f.recoverMs)}`)
  }

  if (only.includes('serve')) {
    const runs = []
    for (let i = 0; i < RUNS.serve; i++) {
      const result = await runtimeRestart({ model, rounds: smoke ? 1 : 3 })
      runs.push(result)
      problems.push(...problemsOfRuntimeRestart(result).map((p) => `serve: ${p}`))
    }
    const down = runs.flatMap((r) => r.down)
    figures.serve = {
      downCalls: down.length,
      upstreamUnavailable: down.filter((c) => c.answer === 'upstream_unavailable').length,
      otherAnswers: down
        .filter((c) => c.answer !== 'upstream_unavailable')
        .map((c) => `${c.tool}:${c.answer}`),
      downCallMs: down.map((c) => c.ms),
      waitingDown: runs.map((r) => `${r.waitingDown.answer} in ${r.waitingDown.ms} ms`),
      healthDown: runs.map((r) => `${r.healthDown.status} runtime=${r.healthDown.runtime}`),
      restartMs: runs.map((r) => r.restartMs),
      recoverMs: runs.map((r) => r.recoverMs ?? -1),
      afterRun: runs.map((r) => r.afterRun.status),
      cutOff: runs.map((r) => `${r.cutOff.status}${r.cutOff.error ? ` (${r.cutOff.error})` : ''}`),
      cutOffAfterKillMs: runs.map((r) => r.cutOff.afterKillMs),
    }
    const f = figures.serve
    say(
      `runtime down (SIGKILL mid-turn) -> ${f.upstreamUnavailable}/${f.downCalls} calls upstream_unavailable in ${spread(f.downCallMs)}` +
        `${f.otherAnswers.length ? `; other answers: ${f.otherAnswers.join(', ')}` : ''}; waiting job.get: ${f.waitingDown.join(', ')}; /health ${f.healthDown.join(', ')}`,
    )
    say(
      `runtime back on its port -> the gateway answered again after ${spread(f.recoverMs)} (no restart); a new run ${f.afterRun.join('/')}`,
    )
    say(
      `runtime back -> the cut-off job reads ${f.cutOff.join(', ')} after ${spread(f.cutOffAfterKillMs)} from the kill`,
    )
  }

  if (only.includes('disk')) {
    const { userNamespace, results } = await diskFaults(smoke ? { freePages: [0, 2, 4] } : {})
    for (const result of results) problems.push(...problemsOfDiskFault(result).map((p) => `disk: ${p}`))
    const refused = results.filter((r) => r.exitCode !== 0)
    const messages = [...new Set(refused.map((r) => r.stderr.trim()))]
    figures.disk = {
      userNamespace,
      cases: results.length,
      refused: refused.length,
      refusedExitCodes: [...new Set(refused.map((r) => r.exitCode))],
      succeededWithRoom: results.length - refused.length,
      changedWhenRefused: refused.filter((r) => r.changed.length > 0).length,
      leftovers: results.reduce((n, r) => n + r.leftovers.length, 0),
      oldKeyLostWhenRefused: refused.filter((r) => !r.victimResolves).length,
      retryAfterFaultFailed: results.filter((r) => r.retryExitCode !== 0).length,
      commandMs: results.map((r) => r.ms),
      messages,
    }
    const f = figures.disk
    say(
      `disk full / read-only -> ${f.refused} of ${f.cases} credential commands refused with exit ${f.refusedExitCodes.join('/')}, ` +
        `${f.changedWhenRefused} changed the store, ${f.leftovers} temporaries left, ${f.oldKeyLostWhenRefused} lost the old key; ` +
        `${f.succeededWithRoom} succeeded where there was room; ${f.retryAfterFaultFailed} failed again once the fault was gone`,
    )
    for (const message of messages) say(`disk -> "${message}"`)
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await model.close()
}

const result = {
  smoke,
  runs: RUNS,
  seconds: Math.round((Date.now() - startedAt) / 1000),
  figures,
  problems,
}
process.stdout.write(`${JSON.stringify(result)}\n`)
for (const line of lines) process.stdout.write(`${line}\n`)
process.stdout.write(
  problems.length === 0
    ? `faults passed (${result.seconds} s)\n`
    : `faults FAILED: ${problems.length} problems\n${problems.map((p) => `  ${p}`).join('\n')}\n`,
)
process.exit(problems.length === 0 ? 0 : 1)
