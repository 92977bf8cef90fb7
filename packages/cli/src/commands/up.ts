import type { Logger } from 'pino'
import { type LogFormat, resolveLogFormat } from '../console-format.ts'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { createCliLogger } from '../logger.ts'
import { resolveBinary } from '../runtime/runtime-errors.ts'
import { overridesFromEnv } from '../stack/layout.ts'
import { assertPortFree, resolveNativePort } from '../stack/ports.ts'
import { requireStack } from '../stack/require-stack.ts'
import { readPasswordFile } from '../stack/secrets.ts'
import { assertSecretsOutsideWorkspace } from '../stack/secrets-outside-workspace.ts'
import { DEFAULT_NATIVE_PORT, loadStackConfig, portClash } from '../stack/stack-config.ts'
import { readStackEnv } from '../stack/stack-env.ts'
import { resolveStackPlan } from '../stack/stack-plan.ts'
import { type StartStackInput, startStack } from '../stack/start-stack.ts'
import { superviseStack } from '../stack/supervise-stack.ts'
import { warnIfNoModel } from './model-warning.ts'

export interface UpOptions {
  readonly dir: string
  /** Overrides `gateway.host` (the image binds 0.0.0.0). */
  readonly host?: string | undefined
  /** Time between SIGTERM and SIGKILL when stopping a runtime. */
  readonly stopGraceMs?: number
  /** Deadline for every process to become healthy. */
  readonly startTimeoutMs?: number
  /** Resolves when the supervisor should stop (default: SIGINT or SIGTERM). Tests inject it. */
  readonly stopSignal?: Promise<string>
  readonly logger?: Logger
  /** `auto` (default): human lines on a terminal, JSON lines otherwise. */
  readonly logFormat?: LogFormat
}

/** Outcome of a supervised run. */
export interface UpResult {
  readonly reason: string
}

const DEFAULT_GRACE_MS = 5_000
const DEFAULT_START_TIMEOUT_MS = 60_000

/**
 * `sallyport up`: runs the stack on this machine — the assistant runtime (native server with
 * HTTP Basic), the moderator runtime (every tool denied; classifies what the local screen
 * escalates), the scheduler and the gateway
 * (in this process). Three steps: {@link planUp} (checks, nothing started), `startStack` (waits
 * until all are healthy, logs the MCP URL and the owner key file), `superviseStack`: when any
 * process exits the others are stopped and this throws the error whose exit code names it (10
 * assistant, 11 moderator, 12 scheduler), so an orchestrator restarts the whole runtime. A start
 * that fails is exit 8. SIGINT/SIGTERM stop everything (SIGTERM, SIGKILL after the grace period)
 * and resolve.
 */
export async function up(options: UpOptions, io: Io): Promise<UpResult> {
  const logger = options.logger ?? createCliLogger(undefined, 'info', logFormatOf(options.logFormat))
  const planned = await planUp(options, io, logger)
  const stopRequested = options.stopSignal ?? signalPromise()
  const started = await startStack(planned, {
    logger,
    graceMs: options.stopGraceMs ?? DEFAULT_GRACE_MS,
    deadline: Date.now() + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS),
    stopRequested,
  })
  if ('stoppedBy' in started) return { reason: started.stoppedBy }
  // Asked of the running runtime while the stack is supervised (it never delays a stop).
  void warnIfNoModel(logger, {
    baseUrl: planned.plan.native.url,
    username: planned.plan.native.username,
    password: planned.nativePassword,
    directory: planned.layout.workspace,
  })
  return superviseStack(started, stopRequested, logger)
}

/** The log format in force: `auto` is human lines when standard output is a terminal. */
export function logFormatOf(format: LogFormat | undefined): 'pretty' | 'json' {
  return resolveLogFormat(format ?? 'auto', process.stdout.isTTY === true)
}

/**
 * The first step of `up`, which starts nothing: the stack and its configuration, the plan (the
 * native port of `"auto"` chosen now when none is recorded), the passwords and the binary, and the
 * checks that fail before anything starts — secrets outside the workspace (exit 3), port clashes
 * (exit 3), ports in use (exit 7). Warns when the gateway binds loopback inside the image.
 */
export async function planUp(options: UpOptions, io: Io, logger: Logger): Promise<StartStackInput> {
  const layout = await requireStack(options.dir, overridesFromEnv(io.env))
  await assertSecretsOutsideWorkspace(layout)
  const config = await loadStackConfig(layout.configFile)
  const recorded = await readStackEnv(layout)
  const draft = resolveStackPlan({ layout, config, env: io.env, recorded, flags: { host: options.host } })
  const gatewayHost = draft.gateway.bindHost
  if (draft.gateway.loopbackInImage) {
    // The stack file is obeyed; inside a container a loopback bind is reached from nowhere else.
    logger.warn(
      { event: 'gateway_loopback_in_container', host: gatewayHost },
      `gateway.host is ${gatewayHost}: inside the container only the container itself reaches the gateway; set gateway.host to 0.0.0.0 (what \`sallyport init --container\` writes) and publish the port on the host's loopback`,
    )
  }

  const nativePassword = await readPasswordFile(
    draft.native.passwordFile.path,
    draft.native.passwordFile.shownAs,
  )
  const moderatorPassword = await readPasswordFile(
    draft.moderator.passwordFile.path,
    draft.moderator.passwordFile.shownAs,
  )
  const binary = resolveBinary(io.env)
  const native = await resolveNativePort(config, recorded)
  if (native.fresh && native.port !== DEFAULT_NATIVE_PORT) {
    logger.warn(
      { event: 'native_port_chosen', port: native.port },
      `port ${DEFAULT_NATIVE_PORT} is taken: the native server uses ${native.port}`,
    )
  }
  const plan = resolveStackPlan({
    layout,
    config,
    env: io.env,
    recorded,
    flags: { host: options.host },
    nativePort: native.port,
  })
  // The configuration's own ports were checked when it was loaded; "auto" and --host only now.
  const clash = portClash(plan.listeners)
  if (clash) {
    const auto =
      config.native.port === 'auto' && clash.path.join('.') === 'native.port'
        ? ` ("auto": ${native.fresh ? 'the free port chosen now' : 'recorded in state/stack.env'})`
        : ''
    throw new CliError('ERR_CLI_CONFIG_INVALID', `${clash.path.join('.')}${auto}: ${clash.message}`)
  }
  await assertPortFree(plan.gateway.bindHost, plan.gateway.port, 'gateway.port')
  await assertPortFree(plan.native.host, native.port, 'native.port')
  await assertPortFree(plan.moderator.host, plan.moderator.port, 'moderator.port')
  return {
    layout,
    config,
    plan,
    binary,
    nativePassword,
    moderatorPassword,
    env: io.env,
  }
}

/** Resolves with the first SIGINT/SIGTERM; later ones are absorbed while stopping. */
function signalPromise(): Promise<string> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals): void => resolve(signal)
    process.on('SIGINT', handler)
    process.on('SIGTERM', handler)
  })
}
