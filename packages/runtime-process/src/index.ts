/**
 * @sallyport/runtime-process: starts and supervises opencode runtime processes — the one code path
 * the `sallyport` CLI (assistant and moderator runtimes) and the test harness both use.
 */
export { RuntimeProcessError, type RuntimeProcessErrorCode } from './errors.ts'
export {
  buildRuntimeBaseEnv,
  buildRuntimeEnv,
  DEFAULT_RUNTIME_USERNAME,
  type LaunchRuntimeOptions,
  launchRuntime,
  NPM_OFFLINE,
  RUNTIME_FLAGS,
  type RuntimeBaseEnvInput,
  type RuntimeDirs,
  type RuntimeEnvInput,
  runtimeServeArgs,
} from './launch-runtime.ts'
export {
  armOrphanWatchdog,
  isProcessAlive,
  killProcessGroupsOnSignals,
  liveProcessGroupCount,
  type OrphanWatchdog,
  signalGroup,
} from './process-groups.ts'
export {
  type BinaryLookup,
  type BinaryMissingReason,
  type FindBinaryOptions,
  findOpencodeBinary,
  opencodePlatformPackages,
  resolveOpencodeBinary,
} from './resolve-binary.ts'
export {
  describeExit,
  type ExitInfo,
  type OutputLine,
  type OutputStream,
  type ProcessUser,
  type SpawnProcessGroupOptions,
  type SupervisedProcess,
  spawnProcessGroup,
} from './spawn-process.ts'
export {
  basicAuth,
  LISTENING_LINE,
  type WaitHealthyInput,
  type WaitReadyInput,
  waitForListening,
  waitUntilHealthy,
  waitUntilReady,
} from './wait-ready.ts'
