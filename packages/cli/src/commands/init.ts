import { mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { ensureHandleSecret, INITIAL_CREDENTIALS, seedStack } from '@sallyport/credentials'
import { pluginWrapperSource } from '@sallyport/runtime-guard'
import { tasksPluginWrapperSource } from '@sallyport/scheduler/stack'
import { createDirExclusive, createFileExclusive, exists } from '../stack/create-exclusive.ts'
import { relativeToStack, type StackLayout, stackLayout } from '../stack/layout.ts'
import {
  akmConfig,
  CONFIG_DIR_GITIGNORE,
  GLOBAL_INSTRUCTIONS,
  INSTRUCTIONS_FILE,
  jsonText,
  managedConfig,
  moderatorConfig,
  operatorPolicy,
  PLUGINS_README,
  PREFERENCES_FILES,
  pluginLockSeed,
  userPreferences,
} from '../stack/managed-files.ts'
import { resolveNativePort } from '../stack/ports.ts'
import { runtimeGuardWrapperPath, tasksWrapperPath } from '../stack/runtime-guard-plugin.ts'
import { ensurePasswordFile } from '../stack/secrets.ts'
import {
  DEFAULT_NATIVE_PORT,
  defaultStackConfig,
  detectTimeZone,
  loadStackConfig,
} from '../stack/stack-config.ts'
import { readStackEnv, renderStackEnv, stackEnvVariables } from '../stack/stack-env.ts'

/** One path `init` looked at. */
export interface InitEntry {
  /** Relative to the stack directory; directories end with `/`. */
  readonly path: string
  readonly action: 'created' | 'kept'
}

/** What {@link initStack} did. */
export interface InitResult {
  readonly dir: string
  readonly entries: InitEntry[]
  /** Usernames of credentials created now (their keys are in their key files, never printed). */
  readonly credentialsCreated: string[]
  readonly ownerKeyFile: string
  /** The user preferences file in force (relative to the stack). */
  readonly preferencesFile: string
  /** The native port recorded now on a fresh setup, if any. */
  readonly nativePortChosen?: number
}

export interface InitOptions {
  readonly dir: string
  readonly env?: NodeJS.ProcessEnv
  /** A stack for the container image: a new sallyport.json binds the gateway to 0.0.0.0. */
  readonly container?: boolean
}

/** Directory modes: private state 0700, read-only managed directories 0555. */
const PRIVATE = 0o700
const READ_ONLY_DIR = 0o555
const READ_ONLY_FILE = 0o444

/**
 * `sallyport init`: creates the stack layout. Idempotent: anything present is kept as it is (a
 * secret, a key, a password or an edited file is never overwritten), and a second run creates
 * nothing. Throws `CliError` / `CredentialError`.
 */
export async function initStack(options: InitOptions): Promise<InitResult> {
  const layout = stackLayout(options.dir)
  const entries: InitEntry[] = []
  const dir = async (path: string, mode: number): Promise<void> => {
    record(entries, layout, `${path}/`, await createDirExclusive(path, mode))
  }
  const file = async (path: string, content: string, mode: number): Promise<void> => {
    record(entries, layout, path, await createFileExclusive(path, content, mode))
  }

  await ensureRoot(layout, entries)
  const timezone = detectTimeZone(options.env ?? process.env)
  await file(
    layout.configFile,
    jsonText(defaultStackConfig(timezone, { container: options.container === true })),
    0o644,
  )
  const config = await loadStackConfig(layout.configFile)

  // state/: secrets and the runtimes' private HOME/XDG directories.
  await dir(layout.stateDir, PRIVATE)
  record(entries, layout, layout.nativePassword, await ensurePasswordFile(layout.nativePassword))
  record(entries, layout, layout.moderatorPassword, await ensurePasswordFile(layout.moderatorPassword))
  for (const runtime of [layout.assistantState, layout.moderatorState]) {
    await dir(runtime.root, PRIVATE)
    for (const path of [
      runtime.home,
      runtime.xdgConfig,
      runtime.xdgData,
      runtime.xdgState,
      runtime.xdgCache,
      runtime.tmp,
    ]) {
      await dir(path, PRIVATE)
    }
  }
  await dir(layout.moderatorState.cwd, PRIVATE)
  // The initial credentials are seeded once, on a fresh state: one the operator removed later
  // stays removed. (seedStack also takes the store lock, which a second `init` must not touch.)
  const freshStore = !(await exists(layout.credentialsDir))
  const seeded = freshStore
    ? await seedStack({ stateDir: layout.stateDir })
    : { credentials: [], handleSecretCreated: await ensureHandleSecretIfMissing(layout) }
  record(entries, layout, layout.handleSecret, seeded.handleSecretCreated)
  const created = new Set(seeded.credentials.map((c) => c.username))
  for (const { username } of INITIAL_CREDENTIALS) {
    const key = join(layout.credentialsDir, username, 'key')
    if (created.has(username) || (await exists(key))) record(entries, layout, key, created.has(username))
  }

  // system/: release-owned managed directories, read-only to the runtimes.
  await dir(layout.systemDir, 0o755)
  await dir(layout.managedDir, READ_ONLY_DIR)
  await file(join(layout.managedDir, 'opencode.json'), jsonText(managedConfig()), READ_ONLY_FILE)
  await dir(join(layout.managedDir, 'instructions'), READ_ONLY_DIR)
  await file(join(layout.managedDir, INSTRUCTIONS_FILE), GLOBAL_INSTRUCTIONS, READ_ONLY_FILE)
  await dir(join(layout.managedDir, 'plugins'), READ_ONLY_DIR)
  await file(join(layout.managedDir, 'plugins', 'README.md'), PLUGINS_README, READ_ONLY_FILE)
  await file(runtimeGuardWrapperPath(layout), pluginWrapperSource(), READ_ONLY_FILE)
  await file(tasksWrapperPath(layout), tasksPluginWrapperSource(), READ_ONLY_FILE)
  await seedConfigDir(layout.managedDir, file, dir)
  await dir(layout.moderatorDir, READ_ONLY_DIR)
  await file(join(layout.moderatorDir, 'opencode.json'), jsonText(moderatorConfig()), READ_ONLY_FILE)
  await seedConfigDir(layout.moderatorDir, file, dir)

  // config/: operator policy, user preferences, the scheduler engine.
  await dir(layout.configDir, 0o755)
  await dir(layout.policyDir, 0o755)
  await file(layout.policyFile, jsonText(operatorPolicy()), 0o644)
  await dir(layout.userConfigDir, READ_ONLY_DIR)
  const preferencesFile = await ensurePreferences(layout, entries)
  await seedConfigDir(layout.userConfigDir, file, dir)
  await dir(layout.akmDir, PRIVATE)
  await file(layout.akmConfig, jsonText(akmConfig()), 0o600)

  // knowledge/: provider credentials and task sources; workspace/.
  await dir(layout.knowledgeDir, PRIVATE)
  await dir(layout.secretsDir, PRIVATE)
  await file(layout.authFile, '{}\n', 0o600)
  await dir(layout.tasksDir, PRIVATE)
  await dir(layout.disabledTasksDir, PRIVATE)
  await dir(layout.workspace, 0o755)

  // state/stack.env: written here only on a fresh setup; `up` regenerates it on every start.
  let nativePortChosen: number | undefined
  if (!(await exists(layout.stackEnv))) {
    const native = await resolveNativePort(config, await readStackEnv(layout))
    const text = renderStackEnv(stackEnvVariables(layout, config, { nativePort: native.port }))
    const made = await createFileExclusive(layout.stackEnv, text, 0o600)
    record(entries, layout, layout.stackEnv, made)
    if (made && native.fresh) nativePortChosen = native.port
  } else {
    record(entries, layout, layout.stackEnv, false)
  }

  return {
    dir: layout.root,
    entries,
    credentialsCreated: [...created],
    ownerKeyFile: relativeToStack(layout, layout.ownerKeyFile),
    preferencesFile: relativeToStack(layout, preferencesFile),
    ...(nativePortChosen !== undefined ? { nativePortChosen } : {}),
  }
}

async function ensureHandleSecretIfMissing(layout: StackLayout): Promise<boolean> {
  return (await exists(layout.handleSecret)) ? false : ensureHandleSecret(layout.stateDir)
}

type MakeFile = (path: string, content: string, mode: number) => Promise<void>
type MakeDir = (path: string, mode: number) => Promise<void>

/** `.gitignore`, an empty `node_modules/` and a lock file: the runtime's plugin install becomes a no-op. */
async function seedConfigDir(path: string, file: MakeFile, dir: MakeDir): Promise<void> {
  await file(join(path, '.gitignore'), CONFIG_DIR_GITIGNORE, READ_ONLY_FILE)
  await dir(join(path, 'node_modules'), READ_ONLY_DIR)
  await file(join(path, 'package-lock.json'), jsonText(pluginLockSeed()), READ_ONLY_FILE)
}

/** Keeps whichever preferences file the runtime would use; seeds `opencode.json` when none exists. */
async function ensurePreferences(layout: StackLayout, entries: InitEntry[]): Promise<string> {
  const present = new Set(await readdir(layout.userConfigDir))
  for (const name of PREFERENCES_FILES) {
    if (present.has(name)) {
      const path = join(layout.userConfigDir, name)
      record(entries, layout, path, false)
      return path
    }
  }
  const path = join(layout.userConfigDir, 'opencode.json')
  // The one writable file of the user directory (the runtime edits it in place).
  record(entries, layout, path, await createFileExclusive(path, jsonText(userPreferences()), 0o600))
  return path
}

async function ensureRoot(layout: StackLayout, entries: InitEntry[]): Promise<void> {
  const existed = await exists(layout.root)
  if (!existed) await mkdir(layout.root, { recursive: true, mode: 0o755 })
  entries.push({ path: './', action: existed ? 'kept' : 'created' })
}

function record(entries: InitEntry[], layout: StackLayout, path: string, created: boolean): void {
  entries.push({ path: relativeToStack(layout, path), action: created ? 'created' : 'kept' })
}

/** Human-readable report of {@link initStack} for the terminal. */
export function formatInitResult(result: InitResult): string {
  const lines = result.entries.map((e) => `${e.action === 'created' ? 'created' : 'kept   '} ${e.path}`)
  const createdCount = result.entries.filter((e) => e.action === 'created').length
  lines.push('')
  lines.push(
    createdCount === 0
      ? `Stack at ${result.dir} is complete: nothing to create.`
      : `Stack at ${result.dir}: created ${createdCount}, kept ${result.entries.length - createdCount}.`,
  )
  if (result.nativePortChosen !== undefined && result.nativePortChosen !== DEFAULT_NATIVE_PORT) {
    lines.push(
      `Port ${DEFAULT_NATIVE_PORT} was taken: the native server will use ${result.nativePortChosen} (recorded in state/stack.env).`,
    )
  }
  lines.push(`User preferences: ${result.preferencesFile}`)
  lines.push(`Owner key (policy full): ${result.ownerKeyFile}`)
  lines.push(`Next: sallyport up --dir ${result.dir}`)
  return `${lines.join('\n')}\n`
}
