/**
 * `@sallyport/scheduler/stack`: what the CLI's stack side needs of the scheduler (`init`, `up`,
 * `serve`, the exit codes of every command), without the scheduler itself. It loads Node
 * built-ins only: no daemon, no task sources (yaml), no schedule engine (croner), no zod, no
 * runtime client (`stack.test.ts` checks). The root entry re-exports all of it.
 */
export {
  askScheduler,
  type ControlRequest,
  type ControlResponse,
  type ControlResult,
  type ControlResults,
  callScheduler,
  MAX_SOCKET_PATH_BYTES,
} from './control.ts'
export { defaultEngineConfig } from './engine-defaults.ts'
export { SchedulerError, type SchedulerErrorCode } from './errors.ts'
export { type SchedulerPaths, STACK_CONFIG_FILE, schedulerPaths, shown } from './paths.ts'
export {
  bundledTasksPluginPath,
  daemonEntryPath,
  STACK_DIR_ENV,
  TASKS_MODULE_ENV,
  TASKS_PLUGIN_WRAPPER_FILE,
  tasksPluginWrapperSource,
} from './plugin-wrapper.ts'
export { parseStackEnv, quoteStackEnvValue } from './stack-env.ts'
export { hostTimeZone, isTimeZone } from './time-zone.ts'
export { MAX_USER_ENV_BYTES, parseUserEnv, readUserEnv } from './user-env.ts'
