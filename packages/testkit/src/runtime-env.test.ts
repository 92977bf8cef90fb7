import { afterEach, describe, expect, it } from 'vitest'
import { buildRuntimeEnv, OFFLINE_FLAGS } from './runtime-env.ts'
import type { Sandbox } from './sandbox.ts'

const sandbox: Sandbox = {
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
  delete process.env.npm_config_registry
  delete process.env.SECRET_TOKEN
})

describe('buildRuntimeEnv', () => {
  it('points HOME, XDG dirs, TMPDIR and the config dir into the sandbox with the offline flags', () => {
    const env = buildRuntimeEnv({ sandbox, username: 'u', password: 'p' })
    expect(env).toMatchObject({
      HOME: '/t/home',
      XDG_CONFIG_HOME: '/t/config',
      XDG_DATA_HOME: '/t/data',
      XDG_STATE_HOME: '/t/state',
      XDG_CACHE_HOME: '/t/cache',
      TMPDIR: '/t/tmp',
      OPENCODE_CONFIG_DIR: '/t/opencode-config',
      OPENCODE_SERVER_USERNAME: 'u',
      OPENCODE_SERVER_PASSWORD: 'p',
      npm_config_offline: 'true',
      ...OFFLINE_FLAGS,
    })
  })

  it('points the managed-config dir (merged last, beats everything) at the sandbox, not /etc/opencode', () => {
    const env = buildRuntimeEnv({ sandbox, username: 'u', password: 'p' })
    expect(env.OPENCODE_TEST_MANAGED_CONFIG_DIR).toBe('/t/managed-config')
  })

  it("sets the flags production sets against other vendors' prompts and skills and the web UI", () => {
    const env = buildRuntimeEnv({ sandbox, username: 'u', password: 'p' })
    expect(env).toMatchObject({
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_CLAUDE_CODE_PROMPT: '1',
      OPENCODE_DISABLE_CLAUDE_CODE_SKILLS: '1',
      OPENCODE_DISABLE_EMBEDDED_WEB_UI: '1',
    })
  })

  it('does not inherit the test process environment beyond PATH and locale', () => {
    process.env.OPENCODE_CONFIG_CONTENT = '{}'
    process.env.npm_config_registry = 'https://registry.example'
    process.env.SECRET_TOKEN = 'x'
    const env = buildRuntimeEnv({ sandbox, username: 'u', password: 'p' })
    expect(env.OPENCODE_CONFIG_CONTENT).toBeUndefined()
    expect(env.SECRET_TOKEN).toBeUndefined()
    expect(env.npm_config_registry).toBe('http://127.0.0.1:9/')
    expect(env.PATH).toBe(process.env.PATH)
  })

  it('applies extra variables last and removes undefined ones', () => {
    const env = buildRuntimeEnv({
      sandbox,
      username: 'u',
      password: 'p',
      extra: { OPENCODE_X: '1', npm_config_offline: undefined },
    })
    expect(env.OPENCODE_X).toBe('1')
    expect('npm_config_offline' in env).toBe(false)
  })
})
