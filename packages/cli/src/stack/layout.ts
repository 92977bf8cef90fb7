import { join, resolve } from 'node:path'
import { OWNER_USERNAME, storePaths } from '@sallyport/credentials'
import type { RuntimeDirs } from '@sallyport/runtime-process'
import { schedulerPaths, shown } from '@sallyport/scheduler/stack'

// `sallyport.json`, the one stack configuration file: named by the scheduler, which reads it too.
export { STACK_CONFIG_FILE } from '@sallyport/scheduler/stack'

/**
 * Per-runtime private directories inside `state/` (HOME and XDG dirs of one runtime process);
 * `xdgConfig/opencode` is a link to the runtime's user config directory.
 */
export interface RuntimeStateDirs extends RuntimeDirs {
  readonly root: string
  /** The runtime's working directory (its project directory). */
  readonly cwd?: string
}

/**
 * Absolute paths of every part of a stack (DESIGN.md "Stack layout"). Paths only: nothing here
 * touches the file system.
 */
export interface StackLayout {
  readonly root: string
  /** `sallyport.json`: the operator's intent. */
  readonly configFile: string
  readonly stateDir: string
  readonly handleSecret: string
  readonly nativePassword: string
  readonly moderatorPassword: string
  /** Generated on every `up`; never edited by hand. */
  readonly stackEnv: string
  readonly credentialsDir: string
  readonly ownerKeyFile: string
  readonly assistantState: RuntimeStateDirs
  readonly moderatorState: RuntimeStateDirs & { readonly cwd: string }
  readonly systemDir: string
  /** Managed directory of the assistant runtime (`OPENCODE_CONFIG_DIR`). */
  readonly managedDir: string
  /** Managed directory of the moderator runtime (every tool denied). */
  readonly moderatorDir: string
  readonly configDir: string
  /** Operator policy directory: holds `opencode.json`, merged last (the runtime's managed config). */
  readonly policyDir: string
  readonly policyFile: string
  /** User config directory: preferences file, persona. */
  readonly userConfigDir: string
  readonly akmDir: string
  readonly akmConfig: string
  readonly knowledgeDir: string
  readonly secretsDir: string
  /** The runtime's provider credential store. */
  readonly authFile: string
  readonly tasksDir: string
  readonly disabledTasksDir: string
  /** Never loaded into any runtime's environment. */
  readonly userEnvFile: string
  readonly workspace: string
}

/** The HOME, XDG and temporary directories of one runtime, under `root`. */
export function runtimeDirs(root: string): RuntimeStateDirs {
  return {
    root,
    home: join(root, 'home'),
    xdgConfig: join(root, 'xdg-config'),
    xdgData: join(root, 'xdg-data'),
    xdgState: join(root, 'xdg-state'),
    xdgCache: join(root, 'xdg-cache'),
    tmp: join(root, 'tmp'),
  }
}

/** Directory overrides for a container, where parts of the stack are mounted elsewhere. */
export interface LayoutOverrides {
  /** `SALLYPORT_MANAGED_DIR` (the image mounts `system/assistant` at `/etc/opencode`). */
  readonly managedDir?: string | undefined
  /** `SALLYPORT_POLICY_DIR` (the image mounts the operator policy file into its own directory). */
  readonly policyDir?: string | undefined
  /** `SALLYPORT_WORKSPACE` (the image mounts the workspace at `/work`). */
  readonly workspace?: string | undefined
}

/** Reads the container overrides from the environment (unset or empty means "inside the stack"). */
export function overridesFromEnv(env: NodeJS.ProcessEnv): LayoutOverrides {
  const pick = (name: string): string | undefined => (env[name] ? env[name] : undefined)
  return {
    managedDir: pick('SALLYPORT_MANAGED_DIR'),
    policyDir: pick('SALLYPORT_POLICY_DIR'),
    workspace: pick('SALLYPORT_WORKSPACE'),
  }
}

/** The layout of the stack rooted at `dir` (resolved against the current directory). */
export function stackLayout(dir: string, overrides: LayoutOverrides = {}): StackLayout {
  // The parts the scheduler reads too are named once, in its paths.
  const shared = schedulerPaths(dir)
  const { root, stateDir, knowledgeDir } = shared
  // The credential store's files are named by the store itself.
  const store = storePaths(stateDir)
  const systemDir = join(root, 'system')
  const configDir = join(root, 'config')
  const policyDir = overrides.policyDir ? resolve(overrides.policyDir) : join(configDir, 'opencode')
  const moderatorRoot = join(stateDir, 'moderator')
  return {
    root,
    configFile: shared.stackConfig,
    stateDir,
    handleSecret: store.handleSecret,
    nativePassword: shared.nativePassword,
    moderatorPassword: join(stateDir, 'moderator-password'),
    stackEnv: shared.stackEnv,
    credentialsDir: store.root,
    ownerKeyFile: store.keyFile(OWNER_USERNAME),
    assistantState: runtimeDirs(join(stateDir, 'assistant')),
    moderatorState: { ...runtimeDirs(moderatorRoot), cwd: join(moderatorRoot, 'work') },
    systemDir,
    managedDir: overrides.managedDir ? resolve(overrides.managedDir) : join(systemDir, 'assistant'),
    moderatorDir: join(systemDir, 'moderator'),
    configDir,
    policyDir,
    policyFile: join(policyDir, 'opencode.json'),
    userConfigDir: join(configDir, 'assistant'),
    akmDir: shared.akmDir,
    akmConfig: shared.engineConfig,
    knowledgeDir,
    secretsDir: join(knowledgeDir, 'secrets'),
    authFile: join(knowledgeDir, 'secrets', 'auth.json'),
    tasksDir: shared.tasksDir,
    disabledTasksDir: shared.disabledTasksDir,
    userEnvFile: join(knowledgeDir, 'env', 'user.env'),
    workspace: overrides.workspace ? resolve(overrides.workspace) : join(root, 'workspace'),
  }
}

/** `path` relative to the stack root for messages (`state/handle-secret`); other paths unchanged. */
export function relativeToStack(layout: StackLayout, path: string): string {
  return shown(layout, path)
}
