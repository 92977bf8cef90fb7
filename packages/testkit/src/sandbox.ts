import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { RuntimeEnvInput } from '@sallyport/runtime-process'
import type { JsonObject } from './runtime-config.ts'

/** A user id / group id pair the runtime process runs as. */
export interface ProcessUser {
  uid: number
  gid: number
}

/** The directories of one runtime, all inside `tempDir` (except a caller-given workspace). */
export interface Sandbox {
  tempDir: string
  workspace: string
  home: string
  /** XDG_CONFIG_HOME; holds an empty, read-only `opencode/` so the global config dir exists. */
  configHome: string
  dataHome: string
  stateHome: string
  cacheHome: string
  tmp: string
  /** OPENCODE_CONFIG_DIR with the generated `opencode.json`; read-only for the runtime user. */
  configDir: string
  /**
   * OPENCODE_TEST_MANAGED_CONFIG_DIR: an empty, read-only dir standing in for the runtime's
   * managed-config dir (`/etc/opencode` on Linux), whose `opencode.json` would be merged last and
   * beat every other layer, so a host file there cannot change the tests.
   */
  managedConfigDir: string
}

export interface SandboxOptions {
  config: JsonObject
  /** Parent of the temp dir; default `os.tmpdir()`. */
  parent?: string
  /** Existing workspace to use instead of `<tempDir>/workspace`. */
  workspace?: string
  /** Run as this user (when the harness runs as root); writable dirs are chowned to it. */
  user?: ProcessUser
  /** `git init` the workspace (as the runtime user). */
  gitInit?: boolean
  /** Local plugins: file name → source, written to `<configDir>/plugins/` (read-only like the rest). */
  plugins?: Readonly<Record<string, string>>
  /**
   * A user preferences file in the global config dir (`$XDG_CONFIG_HOME/opencode/`), the one file
   * there the runtime may write (as `config/assistant/` of a stack); the dir stays read-only.
   */
  preferences?: { readonly name: 'opencode.json' | 'opencode.jsonc'; readonly text: string }
}

/**
 * Creates the temp dir layout. The config dirs must not be writable by the runtime's user: that is
 * what stops opencode's background npm install of `@opencode-ai/plugin` into each config dir.
 * As root (whose access checks always pass) that means running the runtime as another user (`user`)
 * with root-owned config dirs; as a normal user the config dirs are made read-only (0555).
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const tempDir = mkdtempSync(join(options.parent ?? tmpdir(), 'sallyport-runtime-'))
  const dir = (name: string): string => {
    const path = join(tempDir, name)
    mkdirSync(path, { recursive: true, mode: 0o700 })
    return path
  }
  const sandbox: Sandbox = {
    tempDir,
    workspace: options.workspace ? resolve(options.workspace) : dir('workspace'),
    home: dir('home'),
    configHome: dir('config'),
    dataHome: dir('data'),
    stateHome: dir('state'),
    cacheHome: dir('cache'),
    tmp: dir('tmp'),
    configDir: dir('opencode-config'),
    managedConfigDir: dir('managed-config'),
  }
  const globalConfigDir = join(sandbox.configHome, 'opencode')
  mkdirSync(globalConfigDir, { recursive: true })
  writeFileSync(join(sandbox.configDir, 'opencode.json'), `${JSON.stringify(options.config, null, 2)}\n`)
  const preferencesFile = options.preferences ? join(globalConfigDir, options.preferences.name) : undefined
  if (preferencesFile && options.preferences) writeFileSync(preferencesFile, options.preferences.text)
  const pluginsDir = join(sandbox.configDir, 'plugins')
  const plugins = Object.entries(options.plugins ?? {})
  if (plugins.length > 0) mkdirSync(pluginsDir, { mode: 0o755 })
  for (const [name, source] of plugins) writeFileSync(join(pluginsDir, name), source, { mode: 0o444 })

  const writable = [sandbox.home, sandbox.dataHome, sandbox.stateHome, sandbox.cacheHome, sandbox.tmp]
  if (!options.workspace) writable.push(sandbox.workspace)
  const readOnly = [sandbox.configHome, globalConfigDir, sandbox.configDir, sandbox.managedConfigDir]
  if (plugins.length > 0) readOnly.push(pluginsDir)
  const { user } = options
  if (user) {
    // Root-owned 0755 config dirs and 0644 files: readable, not writable, for the runtime user.
    chmodSync(tempDir, 0o755)
    for (const path of readOnly) chmodSync(path, 0o755)
    chmodSync(join(sandbox.configDir, 'opencode.json'), 0o644)
    for (const path of writable) chownSync(path, user.uid, user.gid)
    if (preferencesFile) {
      chownSync(preferencesFile, user.uid, user.gid)
      chmodSync(preferencesFile, 0o644)
    }
    if (options.workspace) chownTree(sandbox.workspace, user)
  } else {
    chmodSync(join(sandbox.configDir, 'opencode.json'), 0o444)
    if (preferencesFile) chmodSync(preferencesFile, 0o644)
    for (const path of readOnly) chmodSync(path, 0o555)
  }
  if (options.gitInit) {
    const git = spawnSync('git', ['init', '-q'], {
      cwd: sandbox.workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: sandbox.home },
      ...(user ?? {}),
    })
    if (git.status !== 0) throw new Error(`testkit: git init failed: ${git.stderr?.toString() ?? ''}`)
  }
  return sandbox
}

/**
 * What the runtime's environment is built from (`@sallyport/runtime-process`'s `buildRuntimeEnv`,
 * as for every runtime of the stack): HOME, the XDG dirs, TMPDIR, the config dir and the empty
 * managed-config dir of the sandbox; only PATH, the locale and TZ come from this process.
 * `extra` is applied last; `undefined` removes a variable.
 */
export function sandboxEnvInput(
  sandbox: Sandbox,
  input: { username: string; password: string; extra?: Record<string, string | undefined> },
): RuntimeEnvInput {
  return {
    dirs: {
      home: sandbox.home,
      xdgConfig: sandbox.configHome,
      xdgData: sandbox.dataHome,
      xdgState: sandbox.stateHome,
      xdgCache: sandbox.cacheHome,
      tmp: sandbox.tmp,
    },
    configDir: sandbox.configDir,
    managedConfigDir: sandbox.managedConfigDir,
    timezone: process.env.TZ,
    parent: process.env,
    username: input.username,
    password: input.password,
    ...(input.extra ? { extra: input.extra } : {}),
  }
}

/** Removes the temp dir (restoring write permission on read-only dirs first). Never throws. */
export function removeSandbox(sandbox: Sandbox): void {
  const readOnly = [
    sandbox.configHome,
    join(sandbox.configHome, 'opencode'),
    sandbox.configDir,
    sandbox.managedConfigDir,
  ]
  for (const path of readOnly) {
    try {
      chmodSync(path, 0o755)
    } catch {
      // already gone
    }
  }
  rmSync(sandbox.tempDir, { recursive: true, force: true, maxRetries: 3 })
}

/** Recursively chowns a caller-given workspace so the unprivileged runtime can write in it. */
function chownTree(path: string, user: ProcessUser): void {
  const stat = lstatSync(path)
  lchownSync(path, user.uid, user.gid)
  if (!stat.isDirectory()) return
  for (const name of readdirSync(path)) chownTree(join(path, name), user)
}
