import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildRuntimeEnv } from './runtime-env.ts'
import { createSandbox, removeSandbox, type Sandbox } from './sandbox.ts'

const isRoot = process.getuid?.() === 0
let sandbox: Sandbox | undefined

afterEach(() => {
  if (sandbox) removeSandbox(sandbox)
  sandbox = undefined
})

describe('createSandbox', () => {
  it('writes the config into a config dir inside the temp dir', () => {
    sandbox = createSandbox({ config: { model: 'fake/fake-1' } })
    expect(JSON.parse(readFileSync(join(sandbox.configDir, 'opencode.json'), 'utf8'))).toEqual({
      model: 'fake/fake-1',
    })
    for (const dir of Object.values(sandbox)) expect(dir.startsWith(sandbox.tempDir)).toBe(true)
    expect(existsSync(join(sandbox.configHome, 'opencode'))).toBe(true)
  })

  it('creates an empty managed-config dir inside the temp dir and points the runtime at it', () => {
    sandbox = createSandbox({ config: {} })
    const env = buildRuntimeEnv({ sandbox, username: 'u', password: 'p' })
    const managed = env.OPENCODE_TEST_MANAGED_CONFIG_DIR
    expect(managed).toBe(sandbox.managedConfigDir)
    expect(managed?.startsWith(`${sandbox.tempDir}/`)).toBe(true)
    expect(statSync(sandbox.managedConfigDir).isDirectory()).toBe(true)
    expect(readdirSync(sandbox.managedConfigDir)).toEqual([])
  })

  it('makes the config dirs read-only when the runtime runs as the current user', () => {
    sandbox = createSandbox({ config: {} })
    for (const dir of [
      sandbox.configDir,
      sandbox.configHome,
      join(sandbox.configHome, 'opencode'),
      sandbox.managedConfigDir,
    ]) {
      expect(statSync(dir).mode & 0o777).toBe(0o555)
    }
  })

  it.skipIf(!isRoot)(
    'as root: gives the runtime user its writable dirs and root-owned config dirs (needs root)',
    () => {
      sandbox = createSandbox({ config: {}, user: { uid: 65534, gid: 65534 }, gitInit: true })
      for (const dir of [
        sandbox.home,
        sandbox.dataHome,
        sandbox.stateHome,
        sandbox.cacheHome,
        sandbox.tmp,
        sandbox.workspace,
      ]) {
        expect(statSync(dir).uid).toBe(65534)
      }
      for (const dir of [
        sandbox.configDir,
        sandbox.configHome,
        join(sandbox.configHome, 'opencode'),
        sandbox.managedConfigDir,
      ]) {
        const stat = statSync(dir)
        expect([stat.uid, stat.mode & 0o777]).toEqual([0, 0o755])
      }
      expect(statSync(join(sandbox.workspace, '.git')).uid).toBe(65534)
    },
  )

  it('removeSandbox deletes everything, read-only dirs included', () => {
    const created = createSandbox({ config: {} })
    removeSandbox(created)
    expect(existsSync(created.tempDir)).toBe(false)
  })
})
