import { PresetError, type PresetErrorCode } from '@sallyport/config-presets/errors'
import { CredentialError, type CredentialErrorCode } from '@sallyport/credentials'
import { SchedulerError, type SchedulerErrorCode } from '@sallyport/scheduler/stack'
import { CliError, type CliErrorCode } from './errors.ts'

/**
 * The one place where errors become exit codes. Scripts may rely on these numbers:
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success |
 * | 1 | unexpected error (a bug: please report it) |
 * | 2 | usage: unknown command, missing or invalid argument |
 * | 3 | the stack is missing or its configuration is invalid |
 * | 4 | not found (no such credential or preset) |
 * | 5 | conflict (exists already, key in use, limit reached, store busy, the operator policy decides) |
 * | 6 | I/O or store damage (permissions, corrupt or insecure files) |
 * | 7 | a port is in use |
 * | 8 | a process of the stack failed to start (or exited while starting), or refused a request; a task run did not complete |
 * | 9 | a check found a problem (`doctor`, `preset check`, `task validate`, `task sync`) |
 * | 10 | `up`: the assistant runtime exited while the stack ran; the rest was stopped |
 * | 11 | `up`: the moderator runtime exited while the stack ran; the rest was stopped |
 * | 12 | `up`: the scheduler exited while the stack ran; the rest was stopped |
 *
 * 10–12 tell an orchestrator (or the operator reading a restart loop) which process went first;
 * the stderr line adds that process's own exit code or signal. The whole stack is to be started
 * again either way.
 */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  stack: 3,
  notFound: 4,
  conflict: 5,
  io: 6,
  portInUse: 7,
  process: 8,
  check: 9,
  assistantExited: 10,
  moderatorExited: 11,
  schedulerExited: 12,
} as const

const CLI_EXIT: Record<CliErrorCode, number> = {
  ERR_CLI_USAGE: EXIT.usage,
  ERR_CLI_STACK_MISSING: EXIT.stack,
  ERR_CLI_CONFIG_INVALID: EXIT.stack,
  ERR_CLI_PORT_IN_USE: EXIT.portInUse,
  ERR_CLI_BINARY_NOT_FOUND: EXIT.process,
  ERR_CLI_START_FAILED: EXIT.process,
  ERR_CLI_ASSISTANT_EXITED: EXIT.assistantExited,
  ERR_CLI_MODERATOR_EXITED: EXIT.moderatorExited,
  ERR_CLI_SCHEDULER_EXITED: EXIT.schedulerExited,
  ERR_CLI_CHECK_FAILED: EXIT.check,
  ERR_CLI_IO: EXIT.io,
}

const CREDENTIAL_EXIT: Record<CredentialErrorCode, number> = {
  ERR_CREDENTIALS_INVALID_USERNAME: EXIT.usage,
  ERR_CREDENTIALS_INVALID_POLICY: EXIT.usage,
  ERR_CREDENTIALS_INVALID_KEY: EXIT.usage,
  ERR_CREDENTIALS_INVALID_MAPPING: EXIT.usage,
  ERR_CREDENTIALS_NOT_FOUND: EXIT.notFound,
  ERR_CREDENTIALS_EXISTS: EXIT.conflict,
  ERR_CREDENTIALS_KEY_IN_USE: EXIT.conflict,
  ERR_CREDENTIALS_LIMIT: EXIT.conflict,
  ERR_CREDENTIALS_LOCKED: EXIT.conflict,
  ERR_CREDENTIALS_CORRUPT: EXIT.io,
  ERR_CREDENTIALS_IO: EXIT.io,
  ERR_CREDENTIALS_SECRET_MISSING: EXIT.stack,
  ERR_CREDENTIALS_SECRET_INVALID: EXIT.io,
  ERR_CREDENTIALS_SECRET_INSECURE: EXIT.io,
}

const PRESET_EXIT: Record<PresetErrorCode, number> = {
  ERR_PRESET_INVALID_ID: EXIT.usage,
  ERR_PRESET_INVALID_NAME: EXIT.usage,
  ERR_PRESET_INVALID_URL: EXIT.usage,
  ERR_PRESET_INVALID_MODEL: EXIT.usage,
  ERR_PRESET_INVALID_KEY: EXIT.usage,
  ERR_PRESET_NOT_FOUND: EXIT.notFound,
  ERR_PRESET_POLICY: EXIT.conflict,
  ERR_PRESET_RUNTIME: EXIT.process,
}

const SCHEDULER_EXIT: Record<SchedulerErrorCode, number> = {
  ERR_SCHEDULER_INVALID_ID: EXIT.usage,
  ERR_SCHEDULER_INVALID_TASK: EXIT.usage,
  ERR_SCHEDULER_NOT_FOUND: EXIT.notFound,
  ERR_SCHEDULER_EXISTS: EXIT.conflict,
  ERR_SCHEDULER_LOCKED: EXIT.conflict,
  ERR_SCHEDULER_FORBIDDEN: EXIT.conflict,
  ERR_SCHEDULER_CONFIG: EXIT.stack,
  ERR_SCHEDULER_RECONCILE: EXIT.process,
  ERR_SCHEDULER_UNAVAILABLE: EXIT.process,
  ERR_SCHEDULER_IO: EXIT.io,
}

/** The exit code and the one line to print for an error thrown by a command. */
export function describeFailure(error: unknown): { exitCode: number; message: string } {
  if (CliError.isInstance(error))
    return { exitCode: CLI_EXIT[error.code] ?? EXIT.unexpected, message: error.message }
  if (CredentialError.isInstance(error)) {
    return { exitCode: CREDENTIAL_EXIT[error.code] ?? EXIT.unexpected, message: error.message }
  }
  if (PresetError.isInstance(error))
    return { exitCode: PRESET_EXIT[error.code] ?? EXIT.unexpected, message: error.message }
  if (SchedulerError.isInstance(error))
    return { exitCode: SCHEDULER_EXIT[error.code] ?? EXIT.unexpected, message: error.message }
  const message = error instanceof Error ? error.message : String(error)
  return { exitCode: EXIT.unexpected, message: `unexpected error: ${firstLine(message)}` }
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? ''
}
