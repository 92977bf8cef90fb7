// `pnpm start`: the main job. Runs the `sallyport` stack (init + up) once the CLI package exists;
// until then it says plainly what is available instead of pretending to serve.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const cli = 'packages/cli/dist/bin.js'
if (existsSync(cli)) {
  const dir = process.env.SALLYPORT_DIR ?? '.stack'
  for (const args of [
    ['init', '--dir', dir],
    ['up', '--dir', dir],
  ]) {
    const run = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit' })
    if (run.status !== 0) process.exit(run.status ?? 1)
  }
} else {
  console.error('sallyport: the `sallyport` CLI (init + up) is not built in this checkout yet.')
  console.error('The libraries are built under packages/*/dist; run the test command to exercise them.')
  process.exit(1)
}
