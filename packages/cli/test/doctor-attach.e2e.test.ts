import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './cli-process.ts'
import { useTempStack } from './temp-stack.ts'

const stack = useTempStack()

describe('sallyport doctor (built CLI)', () => {
  it('passes on a fresh stack and reports the processes as not running', async () => {
    const run = await runCli(['doctor', '--dir', stack.dir, '--json'])
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout) as {
      ok: boolean
      checks: { name: string; status: string; detail: string }[]
    }
    expect(report.ok).toBe(true)
    const byName = Object.fromEntries(report.checks.map((c) => [c.name, c]))
    expect(byName.layout?.status).toBe('ok')
    expect(byName.permissions?.status).toBe('ok')
    expect(byName.runtime?.detail).toBe('opencode 1.18.33 (pinned)')
    expect(byName['config dir system/assistant']?.status).toBe('ok')
    expect(['ok', 'warn']).toContain(byName.gateway?.status)
  })

  it('fails (exit 9) on a secret readable by others and says what to fix', async () => {
    const file = join(stack.dir, 'state/handle-secret')
    chmodSync(file, 0o644)
    try {
      const run = await runCli(['doctor', '--dir', stack.dir])
      expect(run.code).toBe(9)
      expect(run.stdout).toMatch(
        /FAIL {2}permissions: readable by group or others: state\/handle-secret \(644\)\n {6}fix: chmod 600/,
      )
      expect(run.stderr).toBe('sallyport: 1 problem found (see above)\n')
    } finally {
      chmodSync(file, 0o600)
    }
  })
})

describe('sallyport attach (built CLI)', () => {
  it('runs the native attach command with the password in the environment, never in argv', async () => {
    const fake = join(stack.root, 'fake-opencode.sh')
    const record = join(stack.root, 'attach-record.txt')
    writeFileSync(
      fake,
      `#!/bin/sh\n{ echo "ARGS:$*"; echo "USER:$OPENCODE_SERVER_USERNAME"; echo "PASS:$OPENCODE_SERVER_PASSWORD"; } > "${record}"\nexit 3\n`,
      { mode: 0o755 },
    )
    const run = await runCli(['attach', '--dir', stack.dir, '--session', 'ses_x'], {
      env: { SALLYPORT_OPENCODE_BIN: fake, OPENCODE_SERVER_PASSWORD: 'operator-leftover' },
    })
    expect(run.code).toBe(3) // the client's exit code
    const password = readFileSync(join(stack.dir, 'state/native-password'), 'utf8').trim()
    const [args, user, pass] = readFileSync(record, 'utf8').trim().split('\n')
    const port = /SALLYPORT_NATIVE_PORT='(\d+)'/.exec(
      readFileSync(join(stack.dir, 'state/stack.env'), 'utf8'),
    )?.[1]
    expect(args).toBe(
      `ARGS:attach http://127.0.0.1:${port} --dir ${join(stack.dir, 'workspace')} --session ses_x`,
    )
    expect(args).not.toContain(password)
    expect(user).toBe('USER:opencode')
    expect(pass).toBe(`PASS:${password}`)
  })
})

describe('--help on every command', () => {
  it.each([
    'init',
    'up',
    'serve',
    'attach',
    'doctor',
    'credential add',
    'credential set-policy',
    'credential rotate',
    'credential remove',
    'credential list',
    'credential map',
    'config oauth',
  ])('sallyport %s --help shows usage and examples', async (command) => {
    const run = await runCli([...command.split(' '), '--help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/Examples:/)
  })
})
