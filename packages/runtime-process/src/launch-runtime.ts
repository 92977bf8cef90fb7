import { existsSync } from 'node:fs'
import { type ProcessUser, type SupervisedProcess, spawnProcessGroup } from './spawn-process.ts'

/**
 * Set for every runtime process: no project config, no other vendor's files, no external skills,
 * no embedded web UI, no model catalogue fetch, no autoupdate, no sharing, no LSP downloads.
 * The question tool exists only with this flag (or a TUI client name).
 */
export const RUNTIME_FLAGS: Readonly<Record<string, string>> = Object.freeze({
  OPENCODE_DISABLE_PROJECT_CONFIG: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_CLAUDE_CODE_PROMPT: '1',
  OPENCODE_DISABLE_CLAUDE_CODE_SKILLS: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  OPENCODE_DISABLE_EMBEDDED_WEB_UI: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_ENABLE_QUESTION_TOOL: '1',
})

/**
 * A second line of defence: should a plugin install start anyway (it should not: the config
 * directories are not writable for the runtime), it runs offline against an unreachable registry
 * and fails at once.
 */
export const NPM_OFFLINE: Readonly<Record<string, string>> = Object.freeze({
  npm_config_offline: 'true',
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
})

/** The private HOME, XDG and temporary directories of one runtime process. */
export interface RuntimeDirs {
  readonly home: string
  /** XDG_CONFIG_HOME; `opencode` inside it is the runtime's global config directory. */
  readonly xdgConfig: string
  readonly xdgData: string
  readonly xdgState: string
  readonly xdgCache: string
  /** TMPDIR */
  readonly tmp: string
}

/** What every runtime process's environment is built from (see {@link buildRuntimeEnv}). */
export interface RuntimeBaseEnvInput {
  readonly dirs: RuntimeDirs
  /** `OPENCODE_CONFIG_DIR`: the managed directory (agents, instructions, plugins). */
  readonly configDir: string
  /** The runtime's managed-config directory, merged after every other layer. */
  readonly managedConfigDir: string
  /** `TZ`; not set when omitted. */
  readonly timezone?: string | undefined
  /** The parent environment: only PATH and the locale are taken from it. */
  readonly parent: NodeJS.ProcessEnv
  /**
   * Further variables, applied last; `undefined` removes one. The stack passes the runtime guard
   * module here (`SALLYPORT_RUNTIME_GUARD_MODULE` of `@sallyport/runtime-guard`).
   */
  readonly extra?: Readonly<Record<string, string | undefined>> | undefined
}

/**
 * The runtime server's own default HTTP Basic user name, and so the stack's default
 * (`native.username`): whoever needs the default takes it from here.
 */
export const DEFAULT_RUNTIME_USERNAME = 'opencode'

/** {@link RuntimeBaseEnvInput} plus the HTTP Basic credentials the server demands. */
export interface RuntimeEnvInput extends RuntimeBaseEnvInput {
  readonly username: string
  readonly password: string
}

/**
 * The environment of a runtime server process, built from scratch: nothing of the parent
 * environment leaks in beyond PATH and the locale — no provider keys, no OPENCODE_* or npm
 * settings. The password travels here, never in argv.
 */
export function buildRuntimeEnv(input: RuntimeEnvInput): Record<string, string> {
  return compose(input, {
    OPENCODE_SERVER_USERNAME: input.username,
    OPENCODE_SERVER_PASSWORD: input.password,
  })
}

/**
 * {@link buildRuntimeEnv} without the server credentials: for a runtime process that serves
 * nothing (an `opencode --version` probe).
 */
export function buildRuntimeBaseEnv(input: RuntimeBaseEnvInput): Record<string, string> {
  return compose(input, {})
}

function compose(input: RuntimeBaseEnvInput, credentials: Record<string, string>): Record<string, string> {
  const { dirs, parent } = input
  const env: Record<string, string | undefined> = {
    PATH: parent.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: parent.LANG ?? 'C.UTF-8',
    LC_ALL: parent.LC_ALL,
    TZ: input.timezone,
    SHELL: existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh',
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_STATE_HOME: dirs.xdgState,
    XDG_CACHE_HOME: dirs.xdgCache,
    TMPDIR: dirs.tmp,
    OPENCODE_CONFIG_DIR: input.configDir,
    // A hook of the runtime for the managed-config directory (default /etc/opencode on Linux):
    // its opencode.json is merged last and beats user preferences and PATCH /global/config.
    OPENCODE_TEST_MANAGED_CONFIG_DIR: input.managedConfigDir,
    ...RUNTIME_FLAGS,
    ...NPM_OFFLINE,
    ...credentials,
    ...input.extra,
  }
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value
  return out
}

/** Options of {@link launchRuntime}: where it listens, and what its environment is built from. */
export interface LaunchRuntimeOptions extends RuntimeEnvInput {
  /** Names the process in messages (`assistant`). */
  readonly name: string
  /** The `opencode` binary ({@link resolveOpencodeBinary}). */
  readonly binary: string
  readonly host: string
  readonly port: number
  /** The runtime's project directory. */
  readonly cwd: string
  /** `--log-level`; default `WARN` (the listening line is printed at every level). */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | undefined
  /** Run as this user (see {@link SpawnProcessGroupOptions}). */
  readonly user?: ProcessUser | undefined
  /** Output lines kept; default 200. */
  readonly keepLines?: number
  /** See {@link SpawnProcessGroupOptions.onAbandon}. */
  readonly onAbandon?: () => void
}

/** The arguments of `opencode serve` bound to `host:port`, printing its logs at `logLevel`. */
export function runtimeServeArgs(host: string, port: number, logLevel = 'WARN'): string[] {
  return ['serve', '--hostname', host, '--port', String(port), '--print-logs', '--log-level', logLevel]
}

/**
 * Starts `opencode serve` bound to `host:port` in its own process group, with HTTP Basic from the
 * environment (the password is never in argv) and the environment of {@link buildRuntimeEnv}.
 * Logs go to stdout/stderr so the supervisor can relay them; wait for it with
 * {@link waitUntilReady}.
 *
 * @example
 * const child = launchRuntime({ name: 'assistant', binary, host: '127.0.0.1', port, cwd, dirs, configDir,
 *   managedConfigDir, parent: process.env, username: 'opencode', password })
 * const { url } = await waitUntilReady({ child, authorization: basicAuth('opencode', password), deadline })
 */
export function launchRuntime(options: LaunchRuntimeOptions): SupervisedProcess {
  return spawnProcessGroup({
    name: options.name,
    command: options.binary,
    args: runtimeServeArgs(options.host, options.port, options.logLevel),
    env: buildRuntimeEnv(options),
    cwd: options.cwd,
    user: options.user,
    ...(options.keepLines === undefined ? {} : { keepLines: options.keepLines }),
    ...(options.onAbandon === undefined ? {} : { onAbandon: options.onAbandon }),
  })
}
