// Types of fault-scenarios.mjs (the scenarios the fault tests and bench/faults.mjs share).
import type { ModelServer } from '@sallyport/testkit'

export declare const BIN: string
export declare const CHILD_EXIT_CODES: { assistant: 10; moderator: 11; scheduler: 12 }
export declare const isRoot: boolean
export declare const CREDENTIAL_COMMANDS: Record<CredentialCommand, string[]>

export type StackChild = 'assistant' | 'moderator' | 'scheduler'
export type CredentialCommand = 'add' | 'rotate' | 'set-policy' | 'remove'
export type Cleanups = Array<() => unknown>

export interface ScenarioStack {
  root: string
  dir: string
  ports: { gateway: number; native: number; moderator: number }
  ownerKey(): string
}

export declare function newStack(
  model: ModelServer | undefined,
  cleanups: Cleanups,
  options?: { moderator?: Record<string, unknown> },
): Promise<ScenarioStack>

export interface ChildDeathResult {
  child: StackChild
  children: string[]
  processes: number
  exitCode: number | null
  signal: string | null
  expectedExitCode: number
  stderr: string
  childExited?: { child: string; code: number | null; signal: string | null; exitCode: number }
  deathToExitMs: number
  survivorsAtExit: string[]
  survivors: string[]
  openPortsAtExit: string[]
}
export declare function childDeath(options: {
  model?: ModelServer
  child: StackChild
  stack?: ScenarioStack
  graceMs?: number
  startTimeoutMs?: number
}): Promise<ChildDeathResult>
export declare function problemsOfChildDeath(result: ChildDeathResult): string[]

export interface RuntimeRestartResult {
  runningBefore: string
  down: Array<{ tool: string; answer: string; ms: number; detail?: string }>
  waitingDown: { answer: string; ms: number }
  healthDown: { status: number; runtime?: string; ms: number }
  restartMs: number
  recoverMs?: number
  recovery: string[]
  healthBack: { status: number; runtime?: string }
  afterRun: { status: string; text?: string }
  cutOff: { status: string; error?: string; afterKillMs: number }
  servedThroughout: boolean
}
export declare function runtimeRestart(options: {
  model: ModelServer
  rounds?: number
  deadAfterMs?: number
}): Promise<RuntimeRestartResult>
export declare function problemsOfRuntimeRestart(
  result: RuntimeRestartResult,
  options?: { callBoundMs?: number },
): string[]

export interface DiskFaultCase {
  fault: 'full' | 'read-only'
  freePages?: number
  command: CredentialCommand
  exitCode: number | null
  stderr: string
  stdoutBytes: number
  printedResolves: boolean
  ms: number
  changed: string[]
  leftovers: string[]
  victimResolves: boolean
  victimPolicy?: string
  retryExitCode: number | null
  retryStderr: string
}
export interface DiskFaultsResult {
  userNamespace: boolean
  results: DiskFaultCase[]
}
export declare function diskFaults(options?: {
  commands?: CredentialCommand[]
  freePages?: number[]
  viaUserNamespace?: boolean
}): Promise<DiskFaultsResult>
export declare function problemsOfDiskFault(result: DiskFaultCase): string[]

export interface ModeratorHangResult {
  deadlineMs: number
  blockedBefore?: string
  blocked: { answer: string; ms: number }
  blockedReachedAssistant: number
  sessionsCreatedByBlocked?: number
  baseline: { status: string; ms: number }
  ordinary: { status: string; text?: string; ms: number }
  healthHung: { status: number; moderator?: string; runtime?: string; ms: number }
  healthCommandExit: number | null
  upRunning: boolean
  recoverMs?: number
  resumedReachedAssistant: boolean
  upExit: number | null
}
export declare function moderatorHang(options: {
  model: ModelServer
  deadlineMs?: number
}): Promise<ModeratorHangResult>
export declare function problemsOfModeratorHang(result: ModeratorHangResult): string[]
