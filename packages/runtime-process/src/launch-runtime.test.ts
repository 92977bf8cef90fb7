import { afterEach, describe, expect, it } from 'vitest'
import {
  buildRuntimeBaseEnv,
  buildRuntimeEnv,
  NPM_OFFLINE,
  RUNTIME_FLAGS,
  type RuntimeBaseEnvInput,
  runtimeServeArgs,
} from './launch-runtime.ts'

const base: RuntimeBaseEnvInput = {
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
  timezone: 'Europe/Berlin',
  parent: { PATH: '/usr/bin', LANG: 'de_DE.UTF-8', OPENAI_API_KEY: 'operator-secret' },
}

afterEach(() => {
  delete process.env.OPENCODE_CONFIG_CONTENT
})

describe('buildRuntimeEnv', () => {
  it('points HOME, XDG dirs, TMPDIR and the config dirs at the given directories, with the flags', () => {
    const env = buildRuntimeEnv({ ...base, username: 'u', password: 'p' })
    expect(env).toMatchObject({
      HOME: '/t/home',
      XDG_CONFIG_HOME: '/t/config',
      XDG_DATA_HOME: '/t/data',
      XDG_STATE_HOME: '/t/state',
      XDG_CACHE_HOME: '/t/cache',
      TMPDIR: '/t/tmp',
      OPENCODE_CONFIG_DIR: '/t/opencode-config',
      // merged last and beats everything: never /etc/opencode of the host
      OPENCODE_TEST_MANAGED_CONFIG_DIR: '/t/managed-config',
      OPENCODE_SERVER_USERNAME: 'u',
      OPENCODE_SERVER_PASSWORD: 'p',
      TZ: 'Europe/Berlin',
      ...RUNTIME_FLAGS,
      ...NPM_OFFLINE,
    })
  })

  it("sets the flags against other vendors' prompts and skills, the web UI and fetches", () => {
    expect(RUNTIME_FLAGS).toMatchObject({
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_CLAUDE_CODE_PROMPT: '1',
      OPENCODE_DISABLE_CLAUDE_CODE_SKILLS: '1',
      OPENCODE_DISABLE_EMBEDDED_WEB_UI: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_ENABLE_QUESTION_TOOL: '1',
    })
    expect(NPM_OFFLINE.npm_config_registry).toBe('http://127.0.0.1:9/')
  })

  it('takes nothing of the parent beyond PATH and the locale', () => {
    process.env.OPENCODE_CONFIG_CONTENT = '{}'
    const env = buildRuntimeEnv({ ...base, username: 'u', password: 'p' })
    expect(env.PATH).toBe('/usr/bin')
    expect(env.LANG).toBe('de_DE.UTF-8')
    expect(env.OPENAI_API_KEY).toBeUndefined()
    expect(env.OPENCODE_CONFIG_CONTENT).toBeUndefined()
    expect(Object.keys(env).filter((key) => key.startsWith('npm_config_'))).toEqual(Object.keys(NPM_OFFLINE))
  })

  it('applies extra variables last and removes undefined ones', () => {
    const env = buildRuntimeEnv({
      ...base,
      username: 'u',
      password: 'p',
      extra: { SALLYPORT_RUNTIME_GUARD_MODULE: '/g/plugin.js', npm_config_offline: undefined },
    })
    expect(env.SALLYPORT_RUNTIME_GUARD_MODULE).toBe('/g/plugin.js')
    expect('npm_config_offline' in env).toBe(false)
  })

  it('leaves TZ unset without a time zone', () => {
    expect('TZ' in buildRuntimeEnv({ ...base, timezone: undefined, username: 'u', password: 'p' })).toBe(
      false,
    )
  })
})

describe('buildRuntimeBaseEnv', () => {
  it('is the same environment without the server credentials', () => {
    const full = buildRuntimeEnv({ ...base, username: 'u', password: 'p' })
    const { OPENCODE_SERVER_USERNAME, OPENCODE_SERVER_PASSWORD, ...rest } = full
    expect(buildRuntimeBaseEnv(base)).toEqual(rest)
  })
})

describe('runtimeServeArgs', () => {
  it('binds host and port, prints logs, WARN by default; no secret in argv', () => {
    expect(runtimeServeArgs('127.0.0.1', 3810)).toEqual([
      'serve',
      '--hostname',
      '127.0.0.1',
      '--port',
      '3810',
      '--print-logs',
      '--log-level',
      'WARN',
    ])
    expect(runtimeServeArgs('::1', 1, 'DEBUG').at(-1)).toBe('DEBUG')
  })
})
