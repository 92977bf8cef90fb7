import { symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, tempDir } from './cli-process.ts'
import { logLines } from './stack-fixture.ts'

// A workspace that holds the stack state would hand credential keys, the handle secret and the
// native password to every read/full credential (gateway.workspace.read).

let root: string
let dir: string
let remove: () => void
beforeAll(async () => {
  const temp = tempDir()
  remove = temp.remove
  root = temp.path
  dir = join(root, 'stack')
  expect((await runCli(['init', '--dir', dir])).code).toBe(0)
})
afterAll(() => remove())

describe('workspace and secrets (built CLI)', () => {
  it('serve --workspace <stack root> refuses to start (exit 3, one line)', async () => {
    const run = await runCli(['serve', '--dir', dir, '--workspace', dir, '--port', '1'])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(
      /^agentgate: the workspace \S+ contains state: credential keys and secrets would be readable through the gateway; [^\n]*\n$/,
    )
    expect(logLines(run.stdout).filter((l) => l.event === 'ready')).toEqual([])
  })

  it('up with AGENTGATE_WORKSPACE=<stack root> refuses to start (exit 3), starting nothing', async () => {
    const run = await runCli(['up', '--dir', dir], { env: { AGENTGATE_WORKSPACE: dir } })
    expect(run.code).toBe(3)
    expect(run.stderr.split('\n')).toHaveLength(2)
    expect(run.stderr).toMatch(/^agentgate: the workspace \S+ contains state: /)
    expect(logLines(run.stdout).filter((l) => l.event === 'child_started')).toEqual([])
  })

  it('compares real paths: a link to state/ as the workspace is refused', async () => {
    const link = join(root, 'link-to-state')
    symlinkSync(join(dir, 'state'), link)
    const run = await runCli(['up', '--dir', dir], { env: { AGENTGATE_WORKSPACE: link } })
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/^agentgate: the workspace \S+link-to-state is state: /)
  })

  it('a workspace inside knowledge/secrets/ is refused by serve', async () => {
    const run = await runCli(['serve', '--dir', dir, '--workspace', join(dir, 'knowledge/secrets/sub')])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/lies inside knowledge\/secrets: /)
  })

  it('doctor flags a workspace equal to state/ (exit 9)', async () => {
    const run = await runCli(['doctor', '--dir', dir, '--json'], {
      env: { AGENTGATE_WORKSPACE: join(dir, 'state') },
    })
    expect(run.code).toBe(9)
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string; detail: string }[] }
    const found = report.checks.find((c) => c.name === 'secrets outside workspace')
    expect(found?.status).toBe('fail')
    expect(found?.detail).toMatch(/the workspace \S+\/state is state/)
  })

  it('doctor flags a workspace equal to the stack root', async () => {
    const run = await runCli(['doctor', '--dir', dir, '--json'], { env: { AGENTGATE_WORKSPACE: dir } })
    expect(run.code).toBe(9)
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string }[] }
    expect(report.checks.find((c) => c.name === 'secrets outside workspace')?.status).toBe('fail')
  })
})
