// `pnpm bench`: runs every package's bench/run.mjs in turn (built code, one process each) and
// prints their ratios. Benchmarks are ratios against a baseline measured in the same run.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

const only = process.argv.slice(2)
let failed = false
for (const name of readdirSync('packages').sort()) {
  const script = join('packages', name, 'bench', 'run.mjs')
  if (!existsSync(script) || (only.length > 0 && !only.includes(name))) continue
  console.log(`\n## ${name}`)
  const result = spawnSync(process.execPath, ['--expose-gc', join('bench', 'run.mjs')], {
    stdio: 'inherit',
    cwd: join('packages', name),
  })
  if (result.status !== 0) failed = true
}
process.exit(failed ? 1 : 0)
