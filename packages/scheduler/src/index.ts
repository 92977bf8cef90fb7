/**
 * `@sallyport/scheduler`: scheduled agent tasks of a sallyport stack. Task sources are strict
 * YAML files (`knowledge/tasks/<id>.yml`); activation lives only in `scheduler.enabled` of
 * `config/akm/config.json`; the scheduler reconciles both at start and every 60 s and runs due tasks
 * through the native server with the `scheduled` profile; the task helper is the one mutation
 * boundary of the CLI and the assistant's task tools.
 */
export { type HostSettings, readHostSettings, setTaskEnabled } from './activation.ts'
export { serveControl } from './control.ts'
export { type DaemonOptions, jsonLog, runSchedulerDaemon, type SchedulerLog } from './daemon.ts'
export {
  type EngineConfig,
  EngineConfigSchema,
  type EngineTarget,
  readEngineConfig,
} from './engine-config.ts'
export {
  appendHistory,
  MAX_HISTORY_BYTES,
  RUN_OUTCOMES,
  type RunOutcome,
  type RunRecord,
  RunRecordSchema,
  readHistory,
} from './history.ts'
export { type TaskLockOptions, withTaskLock } from './lock.ts'
export { checkOutputPath, DEFAULT_OUTPUT, expandOutputPath, RESERVED_KNOWLEDGE_DIRS } from './output-path.ts'
export { socketReconciler } from './reconcile.ts'
export {
  type RunRuntime,
  type RunTaskInput,
  runTask,
  SCHEDULED_AGENT,
  TASK_METADATA_KEY,
  writeResult,
} from './run-task.ts'
export { sanitizeMessage } from './sanitize.ts'
export { type CompiledSchedule, checkSchedule, compileSchedule, SCHEDULE_NICKNAMES } from './schedule.ts'
export {
  createScheduler,
  LATE_TOLERANCE_MS,
  type Scheduler,
  type SchedulerClock,
  type SchedulerOptions,
  type SchedulerStatus,
  SYNC_INTERVAL_MS,
  type SyncReport,
  systemClock,
} from './scheduler.ts'
// What the light `./stack` entry offers, re-exported whole (one list of those names).
export * from './stack.ts'
export {
  type InvalidTask,
  MAX_TASK_FILES,
  readTaskCatalog,
  readTaskFile,
  type TaskCatalog,
} from './task-files.ts'
export {
  type CreateTaskInput,
  createTaskHelper,
  defaultOutput,
  idFromFileName,
  MAX_RESTORE_FILES,
  type MutationResult,
  type Reconciler,
  type RestoreResult,
  type TaskHelper,
  type TaskHelperOptions,
  type TaskListing,
  type TaskView,
} from './task-helper.ts'
export {
  checkTaskId,
  DEFAULT_TIMEOUT_SECONDS,
  HOSTILE_CONTENT_GUIDANCE,
  isTaskId,
  MAX_PROMPT_LENGTH,
  MAX_TASK_SOURCE_BYTES,
  MAX_TIMEOUT_SECONDS,
  MIN_TIMEOUT_SECONDS,
  parseDuration,
  parseTaskSource,
  renderTaskSource,
  TASK_ID_PATTERN,
  type TaskDefinition,
  type TaskSource,
  type TaskSourceInput,
  TaskSourceSchema,
} from './task-source.ts'
export {
  createTaskTools,
  TASK_TOOL_NAMES,
  type TaskToolsOptions,
  type ToolContext,
  type ToolDefinition,
} from './task-tools.ts'
