import { symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './cli-process.ts'
import { logLines } from './stack-fixture.ts'
import { useTempStack } from './temp-stack.ts'

// A workspace that holds the stack state would hand credential keys, the handle secret and the
// native password to every read/full credential (gateway.workspace.read).

const stack = useTempStack()

describe('workspace and secrets (built CLI)', () => {
  it('serve --workspace <stack root> refuses to start (exit 3, one line)', async () => {
    const run = await runCli(['serve', '--dir', stack.dir, '--workspace', stack.dir, '--port', '1'])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(
      /^sallyport: the workspace \S+ contains state: credential keys and secrets would be readable through the gateway; [^\n]*\n$/,
    )
    expect(logLines(run.stdout).filter((l) => l.event === 'ready')).toEqual([])
  })

  it('up with SALLYPORT_WORKSPACE=<stack root> refuses to start (exit 3), starting nothing', async () => {
    const run = await runCli(['up', '--dir', stack.dir], { env: { SALLYPORT_WORKSPACE: stack.dir } })
    expect(run.code).toBe(3)
    expect(run.stderr.split('\n')).toHaveLength(2)
    expect(run.stderr).toMatch(/^sallyport: the workspace \S+ contains state: /)
    expect(logLines(run.stdout).filter((l) => l.event === 'child_started')).toEqual([])
  })

  it('compares real paths: a link to state/ as the workspace is refused', async () => {
    const link = join(stack.root, 'link-to-state')
    symlinkSync(join(stack.dir, 'state'), link)
    const run = await runCli(['up', '--dir', stack.dir], { env: { SALLYPORT_WORKSPACE: link } })
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/^sallyport: the workspace \S+link-to-state is state: /)
  })

  it('a workspace inside knowledge/secrets/ is refused by serve', async () => {
    const run = await runCli([
      'serve',
      '--dir',
      stack.dir,
      '--workspace',
      join(stack.dir, 'knowledge/secrets/sub'),
    ])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/lies inside knowledge\/secrets: /)
  })

  it('doctor flags a workspace equal to state/ (exit 9)', async () => {
    const run = await runCli(['doctor', '--dir', stack.dir, '--json'], {
      env: { SALLYPORT_WORKSPACE: join(stack.dir, 'state') },
    })
    expect(run.code).toBe(9)
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string; detail: string }[] }
    const found = report.checks.find((c) => c.name === 'secrets outside workspace')
    expect(found?.status).toBe('fail')
    expect(found?.detail).toMatch(/the workspace \S+\/state is state/)
  })

  it('doctor flags a workspace equal to the stack root', async () => {
    const run = await runCli(['doctor', '--dir', stack.dir, '--json'], {
      env: { SALLYPORT_WORKSPACE: stack.dir },
    })
    expect(run.code).toBe(9)
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string }[] }
    expect(report.checks.find((c) => c.name === 'secrets outside workspace')?.status).toBe('fail')
  })
})
