import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { buildRuntimeEnv, NPM_OFFLINE, RUNTIME_FLAGS } from '@sallyport/runtime-process'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox, removeSandbox, type Sandbox, sandboxEnvInput } from './sandbox.ts'

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
    const env = buildRuntimeEnv(sandboxEnvInput(sandbox, { username: 'u', password: 'p' }))
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

describe('sandboxEnvInput', () => {
  const fixed: Sandbox = {
    tempDir: '/t',
    workspace: '/t/workspace',
    home: '/t/home',
    configHome: '/t/config',
    dataHome: '/t/data',
    stateHome: '/t/state',
    cacheHome: '/t/cache',
    tmp: '/t/tmp',
    configDir: '/t/opencode-config',
    managedConfigDir: '/t/managed-config',
  }

  afterEach(() => {
    delete process.env.OPENCODE_CONFIG_CONTENT
    delete process.env.SECRET_TOKEN
  })

  it('maps HOME, the XDG dirs, TMPDIR and both config dirs to the sandbox; TZ and the parent are this process', () => {
    expect(sandboxEnvInput(fixed, { username: 'u', password: 'p' })).toEqual({
      dirs: {
        home: '/t/home',
        xdgConfig: '/t/config',
        xdgData: '/t/data',
        xdgState: '/t/state',
        xdgCache: '/t/cache',
        tmp: '/t/tmp',
      },
      configDir: '/t/opencode-config',
      managedConfigDir: '/t/managed-config',
      timezone: process.env.TZ,
      parent: process.env,
      username: 'u',
      password: 'p',
    })
  })

  it('gives the runtime the production flags and offline npm', () => {
    const env = buildRuntimeEnv(sandboxEnvInput(fixed, { username: 'u', password: 'p' }))
    expect(env).toMatchObject({ ...RUNTIME_FLAGS, ...NPM_OFFLINE, OPENCODE_SERVER_USERNAME: 'u' })
  })

  it('does not inherit the test process environment beyond PATH and locale', () => {
    process.env.OPENCODE_CONFIG_CONTENT = '{}'
    process.env.SECRET_TOKEN = 'x'
    const env = buildRuntimeEnv(sandboxEnvInput(fixed, { username: 'u', password: 'p' }))
    expect(env.OPENCODE_CONFIG_CONTENT).toBeUndefined()
    expect(env.SECRET_TOKEN).toBeUndefined()
    expect(env.PATH).toBe(process.env.PATH)
  })

  it('applies extra variables last and removes undefined ones', () => {
    const env = buildRuntimeEnv(
      sandboxEnvInput(fixed, {
        username: 'u',
        password: 'p',
        extra: { OPENCODE_X: '1', npm_config_offline: undefined },
      }),
    )
    expect(env.OPENCODE_X).toBe('1')
    expect('npm_config_offline' in env).toBe(false)
  })
})
