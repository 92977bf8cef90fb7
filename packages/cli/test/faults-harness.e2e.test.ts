import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { expect, it } from 'vitest'

// The fault harness itself (`pnpm bench:faults`, bench/faults.mjs) runs and reports: its shortest
// run (`--smoke --only child`: each process of `up` killed once), so the harness cannot rot
// while the tests that share its scenarios (faults-*.e2e.test.ts) stay green. It must print its
// JSON, one line per figure, and pass.

const HARNESS = join(import.meta.dirname, '..', 'bench', 'faults.mjs')

it('faults.mjs --smoke --only child: prints its JSON and one line per child, and passes', async () => {
  const child = spawn(process.execPath, [HARNESS, '--smoke', '--only', 'child'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  for (const line of output.split('\n')) if (line.startsWith('faults')) process.stdout.write(`${line}\n`)
  const json = JSON.parse(output.split('\n').find((line) => line.startsWith('{')) ?? '{}')
  expect(json.problems, output).toEqual([])
  expect(Object.keys(json.figures.child)).toEqual(['assistant', 'moderator', 'scheduler'])
  expect(json.figures.child.moderator.exitCodes).toEqual([11])
  expect(output).toMatch(/^faults child scheduler SIGKILL -> up exit 12 after median \d+ ms/m)
  expect(output).toContain('faults passed')
  expect(code, output).toBe(0)
}, 300_000)
