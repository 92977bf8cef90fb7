import { RUNTIME_GUARD_MODULE_ENV } from '@sallyport/runtime-guard'
import { basicAuth, launchRuntime, type SupervisedProcess, waitUntilReady } from '@sallyport/runtime-process'
import { STACK_DIR_ENV, TASKS_MODULE_ENV } from '@sallyport/scheduler/stack'
import { redactSecrets } from '@sallyport/upstream-client'
import type { Logger } from 'pino'
import { CliError } from '../errors.ts'
import { knownSecretsOf } from '../gateway/known-secrets.ts'
import { type RunningGateway, stackGatewayOptions, startGateway } from '../gateway/start-gateway.ts'
import { prepareRuntimeDirs } from '../runtime/prepare-dirs.ts'
import { asStartFailure } from '../runtime/runtime-errors.ts'
import { relativeToStack, type StackLayout } from './layout.ts'
import { ensureRuntimeGuard, ensureTasksPlugin } from './runtime-guard-plugin.ts'
import type { StackConfig } from './stack-config.ts'
import type { StackPlanWithNativePort } from './stack-plan.ts'
import { schedulerHealth, startScheduler } from './start-scheduler.ts'
import { writeStackEnv } from './write-stack-env.ts'

/** What `up` planned: the stack, its plan (native port known), the binary and the passwords read. */
export interface StartStackInput {
  readonly layout: StackLayout
  readonly config: StackConfig
  readonly plan: StackPlanWithNativePort
  readonly binary: string
  readonly nativePassword: string
  readonly moderatorPassword: string
  /** The parent environment (PATH and locale go to the runtimes). */
  readonly env: NodeJS.ProcessEnv
}

/** How and how long to start. */
export interface StartStackOptions {
  readonly logger: Logger
  /** SIGTERM → SIGKILL grace when stopping a runtime. */
  readonly graceMs: number
  /** Epoch ms by which every process must be healthy. */
  readonly deadline: number
  /** Resolves with a signal name when the operator asks to stop (also while starting). */
  readonly stopRequested: Promise<string>
}

/** The stack, running: its runtimes and the gateway. */
export interface RunningStack {
  readonly children: readonly SupervisedProcess[]
  readonly gateway: RunningGateway
  /** Closes the gateway, then stops every runtime (SIGTERM, SIGKILL after the grace). */
  stopAll(): Promise<void>
}

/**
 * Starts what `up` planned: records `state/stack.env`, makes sure the runtime guard will load
 * (fail closed), prepares the runtimes' private directories, launches the assistant and (when
 * enabled) the moderator runtime, waits until both are ready, then starts the gateway in this
 * process and logs the MCP URL. A stop requested meanwhile stops what was started and resolves
 * with `{ stoppedBy }`; any failure stops it too and throws (`ERR_CLI_START_FAILED`, exit 8, for a
 * runtime that exited or was not ready in time).
 */
export async function startStack(
  input: StartStackInput,
  options: StartStackOptions,
): Promise<RunningStack | { stoppedBy: string }> {
  const { layout, config, plan, env } = input
  const { logger } = options
  // Loaded here, not at the top: the commands that run no gateway must not load its package.
  const { redactIds } = await import('@sallyport/gateway-server')
  // The runtimes' own log lines may quote a provider's key (a stream error echoing the request):
  // the stack's known secrets go by value, anything key-shaped by shape, upstream ids as before.
  const secrets = knownSecretsOf({
    authFile: layout.authFile,
    userConfigDir: layout.userConfigDir,
    fixed: [input.nativePassword, input.moderatorPassword],
  })
  const scrub = (line: string): string => redactSecrets(redactIds(line.slice(0, 2000)), secrets())
  await writeStackEnv(layout, config, plan.native.port)
  // Fail closed: without the runtime guard a remote credential's agent reads through symlinks.
  const runtimeGuardModule = await ensureRuntimeGuard(layout)
  const tasksPlugin = await ensureTasksPlugin(layout)
  if (tasksPlugin.problem)
    logger.warn(
      { event: 'task_tools_unavailable' },
      `the assistant will have no task tools: ${tasksPlugin.problem}`,
    )
  await prepareRuntimeDirs({
    dirs: layout.assistantState,
    userConfigDir: layout.userConfigDir,
    authFile: layout.authFile,
  })
  // The moderator calls the assistant's providers (their definitions and the one credential
  // store); its own deny-all configuration is its managed layer, so nothing there can loosen it.
  await prepareRuntimeDirs({
    dirs: layout.moderatorState,
    userConfigDir: layout.userConfigDir,
    authFile: layout.authFile,
    cwd: layout.moderatorState.cwd,
  })

  const children: SupervisedProcess[] = []
  let gateway: RunningGateway | undefined
  const stopAll = async (): Promise<void> => {
    await gateway
      ?.close()
      .catch((error: Error) => logger.warn({ event: 'gateway_close_failed' }, error.message))
    await Promise.all(
      children.map(async (child) => {
        const info = await child.stop(options.graceMs)
        logger.info({
          event: 'child_stopped',
          child: child.name,
          pid: child.pid,
          code: info.code,
          signal: info.signal,
        })
      }),
    )
  }
  let stoppedEarly: string | undefined
  const earlyStop = options.stopRequested.then((signal) => {
    stoppedEarly = signal
    throw new CliError('ERR_CLI_START_FAILED', `${signal} received while starting`)
  })
  earlyStop.catch(() => {})

  try {
    const assistant = launchRuntime({
      name: 'assistant',
      binary: input.binary,
      host: plan.native.host,
      port: plan.native.port,
      cwd: layout.workspace,
      dirs: layout.assistantState,
      configDir: layout.managedDir,
      managedConfigDir: layout.policyDir,
      username: plan.native.username,
      password: input.nativePassword,
      timezone: config.assistant.timezone,
      parent: env,
      extra: {
        [RUNTIME_GUARD_MODULE_ENV]: runtimeGuardModule,
        ...(tasksPlugin.module && { [TASKS_MODULE_ENV]: tasksPlugin.module, [STACK_DIR_ENV]: layout.root }),
      },
    })
    track(assistant, children, logger, scrub)
    // Always part of the stack: escalated input is classified there (the spec has no off switch).
    const moderator = launchRuntime({
      name: 'moderator',
      binary: input.binary,
      host: plan.moderator.host,
      port: plan.moderator.port,
      cwd: layout.moderatorState.cwd,
      dirs: layout.moderatorState,
      configDir: layout.moderatorDir,
      // Its own deny-all configuration is also its managed layer: nothing can loosen it.
      managedConfigDir: layout.moderatorDir,
      username: plan.moderator.username,
      password: input.moderatorPassword,
      timezone: config.assistant.timezone,
      parent: env,
    })
    track(moderator, children, logger, scrub)
    const [assistantReady, moderatorReady] = await Promise.race([
      Promise.all([
        waitUntilReady({
          child: assistant,
          authorization: basicAuth(plan.native.username, input.nativePassword),
          deadline: options.deadline,
          directory: layout.workspace,
        }),
        waitUntilReady({
          child: moderator,
          authorization: basicAuth(plan.moderator.username, input.moderatorPassword),
          deadline: options.deadline,
        }),
      ]),
      earlyStop,
    ])
    logger.info({
      event: 'runtime_ready',
      child: 'assistant',
      url: assistantReady.url,
      version: assistantReady.version,
    })
    logger.info({
      event: 'runtime_ready',
      child: 'moderator',
      url: moderatorReady.url,
      version: moderatorReady.version,
    })
    // The scheduler attaches to the running native server: started once it is ready.
    const scheduler = await startScheduler({
      layout,
      env,
      deadline: options.deadline,
      earlyStop,
      onSpawn: (child) => track(child, children, logger, scrub),
    })
    gateway = await startGateway({
      ...stackGatewayOptions({
        layout,
        config,
        plan,
        nativeUrl: plan.native.url,
        nativeUsername: plan.native.username,
        nativePassword: input.nativePassword,
        moderatorPassword: input.moderatorPassword,
        logger,
      }),
      runtimeHealthExtra: () => schedulerHealth(scheduler.socket),
    })
  } catch (error) {
    await stopAll()
    if (stoppedEarly !== undefined) {
      logger.info({ event: 'stopped', reason: stoppedEarly }, 'sallyport stopped while starting')
      return { stoppedBy: stoppedEarly }
    }
    throw asStartFailure(error)
  }

  const ownerKeyFile = relativeToStack(layout, layout.ownerKeyFile)
  logger.info(
    {
      event: 'ready',
      mcpUrl: plan.gateway.mcpUrl,
      ownerKeyFile: layout.ownerKeyFile,
      nativeUrl: plan.native.url,
    },
    `sallyport is up: MCP endpoint ${plan.gateway.mcpUrl}; owner key in ${ownerKeyFile} (send it as "Authorization: Bearer <key>")`,
  )
  return { children, gateway, stopAll }
}

function track(
  child: SupervisedProcess,
  children: SupervisedProcess[],
  logger: Logger,
  scrub: (line: string) => string,
): void {
  children.push(child)
  logger.info({ event: 'child_started', child: child.name, pid: child.pid })
  child.onLine((line, stream) => {
    if (line.trim().length === 0) return
    // The runtime logs its own session and message ids: never passed on (they are upstream ids);
    // nor a key it quotes.
    logger.info({ event: 'child_output', child: child.name, stream, line: scrub(line) })
  })
}
