import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { expect, it } from 'vitest'

// The README's "first look" demo must keep working: run it as a user would and check that it
// walked the whole workflow and stopped its stack.
it('the demo script runs one MCP session through the workflow and stops its stack', async () => {
  const script = join(import.meta.dirname, '..', 'scripts', 'demo.mjs')
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (c) => {
    out += c
  })
  child.stderr.on('data', (c) => {
    out += c
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  expect(code, out.slice(-2000)).toBe(0)
  for (const step of [
    'gateway.agent.run',
    'gateway.interaction.respond',
    'gateway.job.get',
    'gateway.session.get',
    '▶ done',
  ])
    expect(out).toContain(step)
  expect(out).toMatch(/"status": "completed"/)
  // The runtime guard is live in the stack `up` runs: the planted symlink to the owner key is refused.
  expect(out).toContain('read: refused by the workspace guard')
  // The demo prints handles, never upstream ids.
  expect(out.replace(/v1\.[A-Za-z0-9_-]{20,}/g, '')).not.toMatch(/\b(ses|msg|per|que)_[0-9A-Za-z]{20,}/)
}, 120_000)
