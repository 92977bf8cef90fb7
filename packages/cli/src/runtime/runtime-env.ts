import { existsSync } from 'node:fs'
import { RUNTIME_GUARD_MODULE_ENV } from '@agentgate/runtime-guard'
import type { RuntimeStateDirs } from '../stack/layout.ts'

/**
 * Set for every runtime process: no project config, no other vendor's files, no external skills,
 * no embedded web UI, no model catalogue fetch, no autoupdate, no sharing, no LSP downloads.
 * The question tool exists only with this flag (or a TUI client name).
 */
export const RUNTIME_FLAGS: Readonly<Record<string, string>> = {
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
}

/** A second line of defence: should a plugin install start anyway, it fails at once, offline. */
export const NPM_OFFLINE: Readonly<Record<string, string>> = {
  npm_config_offline: 'true',
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
}

/** What every runtime process's environment is built from (see {@link RuntimeEnvInput}). */
export interface RuntimeBaseEnvInput {
  readonly dirs: RuntimeStateDirs
  /** `OPENCODE_CONFIG_DIR`: the managed directory (agents, instructions, plugins). */
  readonly configDir: string
  /** The runtime's managed-config directory, merged after every other layer. */
  readonly managedConfigDir: string
  readonly timezone: string
  /** The parent environment: only PATH and the locale are taken from it. */
  readonly parent: NodeJS.ProcessEnv
  /** The runtime guard module the managed directory's plugin wrapper imports (assistant only). */
  readonly runtimeGuardModule?: string
}

export interface RuntimeEnvInput extends RuntimeBaseEnvInput {
  readonly username: string
  readonly password: string
}

/**
 * The environment of a runtime process, built from scratch: nothing of the operator's
 * environment leaks in beyond PATH and the locale — no provider keys, no OPENCODE_* or npm
 * settings, and never `knowledge/env/user.env`. The password travels here, never in argv.
 */
export function buildRuntimeEnv(input: RuntimeEnvInput): Record<string, string> {
  return {
    ...buildRuntimeBaseEnv(input),
    OPENCODE_SERVER_USERNAME: input.username,
    OPENCODE_SERVER_PASSWORD: input.password,
  }
}

/**
 * {@link buildRuntimeEnv} without the server credentials: for a runtime process that serves
 * nothing (`doctor`'s `opencode --version` probe).
 */
export function buildRuntimeBaseEnv(input: RuntimeBaseEnvInput): Record<string, string> {
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
    [RUNTIME_GUARD_MODULE_ENV]: input.runtimeGuardModule,
  }
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value
  return out
}
