import { existsSync } from 'node:fs'
import type { Sandbox } from './sandbox.ts'

/** Flags that keep the runtime offline, quiet and free of host configuration (see upstream NOTES.md). */
export const OFFLINE_FLAGS: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_PROJECT_CONFIG: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_CLAUDE_CODE_PROMPT: '1',
  OPENCODE_DISABLE_CLAUDE_CODE_SKILLS: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  OPENCODE_DISABLE_EMBEDDED_WEB_UI: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_ENABLE_QUESTION_TOOL: '1',
}

/**
 * If an npm install is attempted anyway (it should not be: config dirs are read-only for the
 * runtime user), it runs offline against an unreachable registry and fails at once.
 */
export const NPM_OFFLINE_ENV: Readonly<Record<string, string>> = {
  npm_config_offline: 'true',
  npm_config_registry: 'http://127.0.0.1:9/',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
}

export interface RuntimeEnvInput {
  sandbox: Sandbox
  username: string
  password: string
  /** Extra variables; `undefined` removes a variable. Applied last. */
  extra?: Record<string, string | undefined>
}

/**
 * The runtime's environment, built from scratch (only PATH, locale and TZ are inherited) so no
 * OPENCODE_*, npm_config_* or credentials of the test process leak into it.
 */
export function buildRuntimeEnv(input: RuntimeEnvInput): Record<string, string> {
  const { sandbox } = input
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: process.env.LANG ?? 'C.UTF-8',
    LC_ALL: process.env.LC_ALL,
    TZ: process.env.TZ,
    SHELL: existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh',
    HOME: sandbox.home,
    XDG_CONFIG_HOME: sandbox.configHome,
    XDG_DATA_HOME: sandbox.dataHome,
    XDG_STATE_HOME: sandbox.stateHome,
    XDG_CACHE_HOME: sandbox.cacheHome,
    TMPDIR: sandbox.tmp,
    OPENCODE_CONFIG_DIR: sandbox.configDir,
    // The runtime's hook for its managed-config dir (default /etc/opencode on Linux): an
    // opencode.json there is merged last and beats everything, so point it at an empty sandbox dir.
    OPENCODE_TEST_MANAGED_CONFIG_DIR: sandbox.managedConfigDir,
    OPENCODE_SERVER_USERNAME: input.username,
    OPENCODE_SERVER_PASSWORD: input.password,
    ...OFFLINE_FLAGS,
    ...NPM_OFFLINE_ENV,
    ...input.extra,
  }
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value
  return out
}
