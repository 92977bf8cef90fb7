import { describe, expect, it } from 'vitest'
import { runProcess } from './run-process.ts'

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' }

describe('runProcess', () => {
  it('returns exit code and output, with secrets redacted', async () => {
    const run = await runProcess(
      process.execPath,
      ['-e', 'console.log("key agk_0123456789"); console.error("err agk_0123456789"); process.exit(3)'],
      { timeoutMs: 10_000, env, secrets: ['agk_0123456789'] },
    )
    expect(run).toMatchObject({ code: 3, signal: null, timedOut: false })
    expect(run.stdout).toBe('key [redacted]\n')
    expect(run.stderr).toBe('err [redacted]\n')
  })

  it('passes only the given environment', async () => {
    const run = await runProcess(
      process.execPath,
      ['-e', 'console.log(Object.keys(process.env).sort().join(","))'],
      {
        timeoutMs: 10_000,
        env: { ...env, ONLY_THIS: '1' },
      },
    )
    expect(run.stdout.trim().split(',')).toEqual(expect.arrayContaining(['ONLY_THIS', 'PATH']))
    expect(run.stdout).not.toMatch(/VITEST/)
  })

  it('kills the whole process group on timeout, children included', async () => {
    const script = `
      const { spawn } = require('node:child_process')
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
      console.log(child.pid)
      setInterval(() => {}, 1000)`
    const run = await runProcess(process.execPath, ['-e', script], { timeoutMs: 1_000, env })
    expect(run.timedOut).toBe(true)
    expect(run.signal).toBe('SIGKILL')
    const grandchild = Number(run.stdout.trim())
    expect(grandchild).toBeGreaterThan(0)
    const alive = (): boolean => {
      try {
        process.kill(grandchild, 0)
        return true
      } catch {
        return false
      }
    }
    const deadline = Date.now() + 5_000
    while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(alive()).toBe(false)
  })

  it('fails with ERR_PEER_SPAWN and never shows the arguments', async () => {
    const error = await runProcess(
      '/nonexistent/tool',
      ['--header', 'Authorization: Bearer agk_secret_value'],
      {
        timeoutMs: 1_000,
        env,
      },
    ).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'ERR_PEER_SPAWN' })
    expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain('agk_secret_value')
    expect(String((error as Error).message)).not.toContain('agk_secret_value')
  })
})
