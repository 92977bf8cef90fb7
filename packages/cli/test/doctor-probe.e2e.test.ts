import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { RUNTIME_VERSION } from '../src/stack/managed-files.ts'
import { runCli } from './cli-process.ts'
import { useTempStack } from './temp-stack.ts'

const stack = useTempStack()

describe('sallyport doctor: the runtime version probe (built CLI)', () => {
  it("runs the binary with the assistant runtime's own environment (flags, state dirs), without server credentials", async () => {
    const fake = join(stack.root, 'fake-opencode.sh')
    const record = join(stack.root, 'probe-env.txt')
    writeFileSync(fake, `#!/bin/sh\nenv > "${record}"\necho ${RUNTIME_VERSION}\n`, { mode: 0o755 })
    const run = await runCli(['doctor', '--dir', stack.dir, '--json'], {
      env: { SALLYPORT_OPENCODE_BIN: fake, OPENAI_API_KEY: 'operator-secret', OPENCODE_CONFIG: '/x' },
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
      JSON.parse(readFileSync(join(stack.dir, 'sallyport.json'), 'utf8')) as {
        assistant: { timezone: string }
      }
    ).assistant.timezone
    // Its own throw-away HOME: neither the stack's state (doctor changes nothing there) nor the
    // operator's home.
    expect(env.get('HOME')).toMatch(/sallyport-doctor-[^/]+\/home$/)
    expect(env.get('HOME')?.startsWith(stack.dir)).toBe(false)
    expect(env.get('XDG_CONFIG_HOME')).toMatch(/sallyport-doctor-[^/]+\/xdg-config$/)
    expect(env.get('OPENCODE_CONFIG_DIR')).toBe(join(stack.dir, 'system/assistant'))
    expect(env.get('OPENCODE_DISABLE_PROJECT_CONFIG')).toBe('1')
    expect(env.get('OPENCODE_DISABLE_AUTOUPDATE')).toBe('1')
    expect(env.get('npm_config_offline')).toBe('true')
    expect(env.get('TZ')).toBe(timezone)
    expect(env.has('OPENCODE_SERVER_PASSWORD')).toBe(false)
    expect(env.has('OPENAI_API_KEY')).toBe(false)
    expect(env.has('OPENCODE_CONFIG')).toBe(false)
  })

  it('changes nothing in the stack: the real binary run by doctor leaves state/ as it was, so up starts', async () => {
    const before = listTree(join(stack.dir, 'state'))
    const run = await runCli(['doctor', '--dir', stack.dir, '--json'])
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string }[] }
    expect(report.checks.find((c) => c.name === 'runtime')).toMatchObject({ status: 'ok' })
    expect(listTree(join(stack.dir, 'state'))).toEqual(before)
  })
})

/** Every path under `root`, with its kind, sorted. */
function listTree(root: string): string[] {
  const out: string[] = []
  const walk = (path: string, rel: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const kind = entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'dir' : 'file'
      out.push(`${rel}${entry.name} (${kind})`)
      if (entry.isDirectory()) walk(join(path, entry.name), `${rel}${entry.name}/`)
    }
  }
  walk(root, '')
  return out.sort()
}
