import { copyFileSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './cli-process.ts'
import { useTempStack } from './temp-stack.ts'

// compose.yaml mounts config/assistant/opencode.json (writable) by name: doctor says so when the
// runtime would use another preferences file.

const stack = useTempStack()

async function preferences(): Promise<{ code: number | null; check?: Record<string, string> }> {
  const run = await runCli(['doctor', '--dir', stack.dir, '--json'])
  const report = JSON.parse(run.stdout) as { checks: Record<string, string>[] }
  return { code: run.code, check: report.checks.find((c) => c.name === 'preferences') }
}

describe('sallyport doctor: the preferences file compose.yaml mounts (built CLI)', () => {
  const prefs = (name: string) => join(stack.dir, 'config/assistant', name)

  it('opencode.json in force: ok', async () => {
    const { code, check } = await preferences()
    expect(code).toBe(0)
    expect(check).toMatchObject({ status: 'ok', detail: 'config/assistant/opencode.json' })
  })

  it('opencode.jsonc in force, no opencode.json: a warning naming the compose mount (exit 0)', async () => {
    renameSync(prefs('opencode.json'), prefs('opencode.jsonc'))
    try {
      const { code, check } = await preferences()
      expect(code).toBe(0)
      expect(check?.status).toBe('warn')
      expect(check?.detail).toBe(
        'the runtime uses config/assistant/opencode.jsonc; compose.yaml mounts config/assistant/opencode.json writable, not opencode.jsonc: in the container the runtime cannot save preferences and the start fails (the mounted file is missing)',
      )
      expect(check?.fix).toMatch(/rename it to opencode\.json/)
    } finally {
      renameSync(prefs('opencode.jsonc'), prefs('opencode.json'))
    }
  })

  it('opencode.jsonc shadowing opencode.json: the warning also names the compose mount', async () => {
    copyFileSync(prefs('opencode.json'), prefs('opencode.jsonc'))
    try {
      const { check } = await preferences()
      expect(check?.status).toBe('warn')
      expect(check?.detail).toMatch(
        /^the runtime uses opencode\.jsonc; opencode\.json is shadowed; compose\.yaml mounts config\/assistant\/opencode\.json writable, not opencode\.jsonc: in the container the runtime cannot save preferences$/,
      )
    } finally {
      rmSync(prefs('opencode.jsonc'))
    }
  })
})
