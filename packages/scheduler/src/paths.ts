import { join, resolve } from 'node:path'

/** The name of the one stack configuration file the operator edits, at the stack root. */
export const STACK_CONFIG_FILE = 'sallyport.json'

/**
 * Every file the scheduler reads or writes, derived from the stack directory. The CLI's stack
 * layout takes the parts it shares with the scheduler from here, so each is named once.
 */
export interface SchedulerPaths {
  readonly root: string
  /** `sallyport.json`: `assistant.timezone` (read only). */
  readonly stackConfig: string
  /** `config/akm/`: the engine configuration with `scheduler.enabled` (activation), and the task lock; writable for atomic updates. */
  readonly akmDir: string
  readonly engineConfig: string
  readonly lockFile: string
  readonly knowledgeDir: string
  readonly tasksDir: string
  readonly disabledTasksDir: string
  /** `knowledge/task-history/<id>.jsonl`. */
  readonly historyDir: string
  readonly stateDir: string
  /** `state/native-password`: the native server's password, the engine's only secret. */
  readonly nativePassword: string
  /** The running scheduler's control socket (0600, in the private `state/`). */
  readonly socket: string
  /** Recorded by `up` on every start: the native URL and user name. */
  readonly stackEnv: string
}

/** The scheduler's paths in the stack rooted at `root`. */
export function schedulerPaths(root: string): SchedulerPaths {
  const base = resolve(root)
  const akmDir = join(base, 'config', 'akm')
  const knowledgeDir = join(base, 'knowledge')
  const stateDir = join(base, 'state')
  return {
    root: base,
    stackConfig: join(base, STACK_CONFIG_FILE),
    akmDir,
    engineConfig: join(akmDir, 'config.json'),
    lockFile: join(akmDir, '.tasks.lock'),
    knowledgeDir,
    tasksDir: join(knowledgeDir, 'tasks'),
    disabledTasksDir: join(knowledgeDir, 'disabled-tasks'),
    historyDir: join(knowledgeDir, 'task-history'),
    stateDir,
    nativePassword: join(stateDir, 'native-password'),
    socket: join(stateDir, 'scheduler.sock'),
    stackEnv: join(stateDir, 'stack.env'),
  }
}

/** `path` relative to the stack root for messages; other paths unchanged. */
export function shown(paths: Pick<SchedulerPaths, 'root'>, path: string): string {
  return path.startsWith(`${paths.root}/`) ? path.slice(paths.root.length + 1) : path
}
