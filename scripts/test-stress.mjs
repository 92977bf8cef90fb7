// `pnpm test:stress`: the end-to-end suites with both cores kept busy, several rounds in a row.
// A bounded CPU burner (one busy process per core, each ending on its own after at most two
// hours, all stopped when this script ends) runs beside the suites; a round fails on the first
// failing suite and the script exits non-zero. Prints each round's time, the load average and
// the test counts, for the record.
//
//   node scripts/test-stress.mjs [--rounds 3] [--burners N]
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, burners: { type: 'string' } },
})
const rounds = Number(values.rounds)
const burners = Number(values.burners ?? availableParallelism())

// Every end-to-end suite: the real runtime, real processes, real peers. (The container image
// test is left out: it builds an image, which is not what this measures.)
const SUITES = [
  ['gateway-server', ['test/e2e']],
  ['upstream-client', ['test/e2e']],
  ['testkit', ['test/runtime-harness.e2e.test.ts', 'test/runtime-guard-wrapper.e2e.test.ts']],
  ['cli', ['--exclude', 'test/image-run.e2e.test.ts', 'e2e.test.ts']],
  ['peer-tests', ['test']],
]

spawnSync('bash', ['scripts/install-system-deps.sh'], { stdio: 'inherit' })
const build = spawnSync('turbo', ['run', 'build', '--output-logs=errors-only'], { stdio: 'inherit' })
if (build.status !== 0) {
  if (build.error)
    console.error(`test:stress: cannot run turbo (${build.error.message}): run it as \`pnpm test:stress\``)
  process.exit(build.status ?? 1)
}

const burn = Array.from({ length: burners }, () =>
  spawn(process.execPath, ['-e', 'const end = Date.now() + 7_200_000; while (Date.now() < end) {}'], {
    stdio: 'ignore',
  }),
)
const stopBurners = () => {
  for (const child of burn) if (child.exitCode === null) child.kill('SIGKILL')
}
process.on('exit', stopBurners)
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130))
console.log(`test:stress: ${burners} CPU burners on ${availableParallelism()} cores, ${rounds} rounds`)

let failed = false
for (let round = 1; round <= rounds && !failed; round++) {
  const started = Date.now()
  const counts = []
  for (const [name, args] of SUITES) {
    const dir = join('packages', name)
    const report = join(dir, '.vitest-report.json')
    rmSync(report, { force: true })
    const run = spawnSync('npx', ['vitest', 'run', ...args], { cwd: dir, stdio: 'inherit', env: process.env })
    const summary = existsSync(report) ? JSON.parse(readFileSync(report, 'utf8')) : undefined
    const passed = summary?.numPassedTests ?? 0
    const failedTests = summary?.numFailedTests ?? 0
    counts.push(`${name} ${passed}/${passed + failedTests}`)
    if (run.status !== 0 || !summary || failedTests > 0) {
      failed = true
      console.log(`test:stress: round ${round}: ${name} FAILED`)
      break
    }
  }
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')
  console.log(
    `test:stress: round ${round} ${failed ? 'failed' : 'passed'} in ${Math.round((Date.now() - started) / 1000)} s (load ${load}): ${counts.join(', ')}`,
  )
}
stopBurners()
process.exit(failed ? 1 : 0)
