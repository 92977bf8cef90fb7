// `pnpm test`: the whole suite. Clears old reports, runs every package's tests through turbo,
// then prints one closing line with the totals. Exits non-zero if anything failed.
import { spawnSync } from 'node:child_process'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'

// The suite uses Debian's ripgrep and Chromium; install them when missing (root + apt only).
spawnSync('bash', ['scripts/install-system-deps.sh'], { stdio: 'inherit' })
for (const name of readdirSync('packages'))
  rmSync(join('packages', name, '.vitest-report.json'), { force: true })
// --continue: one failing package must not stop the others (the closing line counts them all).
const args = ['run', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)]
const run = spawnSync('turbo', args, { stdio: 'inherit' })
// With extra turbo arguments (a --filter), only the packages that ran are counted.
const summaryArgs = process.argv.length > 2 ? ['--only-ran'] : []
const summary = spawnSync(process.execPath, ['scripts/test-summary.mjs', ...summaryArgs], {
  stdio: 'inherit',
})
process.exit(run.status || summary.status || 0)
