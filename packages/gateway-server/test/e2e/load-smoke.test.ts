import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { expect, it } from 'vitest'

// The CI smoke run of the load harness (issue "Lean and fast under load"): the built gateway in a
// process of its own, the real runtime and the scripted model, 20 clients running jobs back to
// back for one minute, then 50 waiting pollers. It fails only on what must never happen under
// load, not on timings: a job lost (not terminal after its waits), a 5xx answer, or the
// gateway's RSS growing more than 1.2x from the end of warm-up to the end of the soak. The
// harness prints its figures (RSS, connections, wake-up, runtime status latency) either way.

const HARNESS = join(import.meta.dirname, '..', '..', 'bench', 'load.mjs')

it('load smoke: 20 clients for a minute lose no job, get no 5xx, and the gateway RSS stays flat', async () => {
  const child = spawn(process.execPath, [HARNESS, '--smoke'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  for (const line of output.split('\n')) if (line.startsWith('load')) process.stdout.write(`${line}\n`)
  expect(output).toContain('load smoke passed')
  expect(code, output).toBe(0)
}, 300_000)
