import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIME_VERSION } from '../src/stack/managed-files.ts'
import { runCli, tempDir } from './cli-process.ts'

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

describe('agentgate doctor: the runtime version probe (built CLI)', () => {
  it("runs the binary with the assistant runtime's own environment (flags, state dirs), without server credentials", async () => {
    const fake = join(root, 'fake-opencode.sh')
    const record = join(root, 'probe-env.txt')
    writeFileSync(fake, `#!/bin/sh\nenv > "${record}"\necho ${RUNTIME_VERSION}\n`, { mode: 0o755 })
    const run = await runCli(['doctor', '--dir', dir, '--json'], {
      env: { AGENTGATE_OPENCODE_BIN: fake, OPENAI_API_KEY: 'operator-secret', OPENCODE_CONFIG: '/x' },
    })
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string; detail: string }[] }
    expect(report.checks.find((c) => c.name === 'runtime')).toMatchObject({ status: 'ok' })
    const env = new Map(
      readFileSync(record, 'utf8')
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
    )
    const timezone = (
      JSON.parse(readFileSync(join(dir, 'agentgate.json'), 'utf8')) as {
        assistant: { timezone: string }
      }
    ).assistant.timezone
    expect(env.get('HOME')).toBe(join(dir, 'state/assistant/home'))
    expect(env.get('OPENCODE_CONFIG_DIR')).toBe(join(dir, 'system/assistant'))
    expect(env.get('OPENCODE_DISABLE_PROJECT_CONFIG')).toBe('1')
    expect(env.get('OPENCODE_DISABLE_AUTOUPDATE')).toBe('1')
    expect(env.get('npm_config_offline')).toBe('true')
    expect(env.get('TZ')).toBe(timezone)
    expect(env.has('OPENCODE_SERVER_PASSWORD')).toBe(false)
    expect(env.has('OPENAI_API_KEY')).toBe(false)
    expect(env.has('OPENCODE_CONFIG')).toBe(false)
  })
})
