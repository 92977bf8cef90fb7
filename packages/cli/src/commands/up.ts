import type { Logger } from 'pino'
import { CliError } from '../errors.ts'
import { type RunningGateway, startGateway } from '../gateway/start-gateway.ts'
import type { Io } from '../io.ts'
import { createCliLogger } from '../logger.ts'
import { type Child, describeExit } from '../runtime/child.ts'
import { launchRuntime } from '../runtime/launch-runtime.ts'
import { prepareRuntimeDirs } from '../runtime/prepare-dirs.ts'
import { resolveOpencodeBinary } from '../runtime/resolve-binary.ts'
import { basicAuth, waitUntilReady } from '../runtime/wait-ready.ts'
import { allowedOrigins } from '../stack/allowed-origins.ts'
import { type LayoutOverrides, overridesFromEnv, relativeToStack } from '../stack/layout.ts'
import { assertPortFree, resolveNativePort } from '../stack/ports.ts'
import { requireStack } from '../stack/require-stack.ts'
import { ensureRuntimeGuard } from '../stack/runtime-guard-plugin.ts'
import { readPasswordFile } from '../stack/secrets.ts'
import { loadStackConfig, portClash, stackListeners } from '../stack/stack-config.ts'
import { hostForUrl, readStackEnv } from '../stack/stack-env.ts'
import { assertSecretsOutsideWorkspace } from '../stack/workspace-guard.ts'
import { writeStackEnv } from '../stack/write-stack-env.ts'

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
}

/** Outcome of a supervised run. */
export interface UpResult {
  readonly reason: string
}

const DEFAULT_GRACE_MS = 5_000
const DEFAULT_START_TIMEOUT_MS = 60_000

/**
 * `agentgate up`: runs the stack on this machine — the assistant runtime (native server with
 * HTTP Basic), the moderator runtime (every tool denied; started, unused for now) and the gateway
 * (in this process). Waits until all are healthy, logs the MCP URL and the owner key file, then
 * supervises: when any process exits the others are stopped and this throws
 * `ERR_CLI_CHILD_EXITED` (exit 8), so an orchestrator restarts the whole runtime. SIGINT/SIGTERM
 * stop everything (SIGTERM, SIGKILL after the grace period) and resolve.
 */
export async function up(options: UpOptions, io: Io): Promise<UpResult> {
  const logger = options.logger ?? createCliLogger()
  const overrides: LayoutOverrides = overridesFromEnv(io.env)
  const layout = await requireStack(options.dir, overrides)
  await assertSecretsOutsideWorkspace(layout)
  const config = await loadStackConfig(layout.configFile)
  const graceMs = options.stopGraceMs ?? DEFAULT_GRACE_MS
  const deadline = Date.now() + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS)
  const gatewayHost = options.host ?? io.env.AGENTGATE_GATEWAY_HOST ?? config.gateway.host
  const origins = allowedOrigins(io.env.GATEWAY_ALLOWED_ORIGINS, config.gateway.allowedOrigins)

  const nativePassword = await readPasswordFile(layout.nativePassword, 'state/native-password')
  const moderatorPassword = await readPasswordFile(layout.moderatorPassword, 'state/moderator-password')
  const binary = resolveOpencodeBinary(io.env)
  const native = await resolveNativePort(config, await readStackEnv(layout))
  if (native.fresh && native.port !== 3810) {
    logger.warn(
      { event: 'native_port_chosen', port: native.port },
      `port 3810 is taken: the native server uses ${native.port}`,
    )
  }
  // The configuration's own ports were checked when it was loaded; "auto" and --host only now.
  const clash = portClash(stackListeners(config, { gatewayHost, nativePort: native.port }))
  if (clash) {
    const auto =
      config.native.port === 'auto' && clash.path.join('.') === 'native.port'
        ? ` ("auto": ${native.fresh ? 'the free port chosen now' : 'recorded in state/stack.env'})`
        : ''
    throw new CliError('ERR_CLI_CONFIG_INVALID', `${clash.path.join('.')}${auto}: ${clash.message}`)
  }
  await assertPortFree(gatewayHost, config.gateway.port, 'gateway.port')
  await assertPortFree(config.native.host, native.port, 'native.port')
  if (config.moderator.enabled) await assertPortFree('127.0.0.1', config.moderator.port, 'moderator.port')
  await writeStackEnv(layout, config, native.port)
  // Fail closed: without the runtime guard a remote credential's agent reads through symlinks.
  const runtimeGuardModule = await ensureRuntimeGuard(layout)

  await prepareRuntimeDirs({
    dirs: layout.assistantState,
    userConfigDir: layout.userConfigDir,
    authFile: layout.authFile,
  })
  await prepareRuntimeDirs({
    dirs: layout.moderatorState,
    userConfigDir: layout.moderatorDir,
    cwd: layout.moderatorState.cwd,
  })

  const children: Child[] = []
  let gateway: RunningGateway | undefined
  const stopAll = async (): Promise<void> => {
    await gateway
      ?.close()
      .catch((error: Error) => logger.warn({ event: 'gateway_close_failed' }, error.message))
    await Promise.all(
      children.map(async (child) => {
        const info = await child.stop(graceMs)
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
  const stopRequested = options.stopSignal ?? signalPromise()
  let stoppedEarly: string | undefined
  const earlyStop = stopRequested.then((signal) => {
    stoppedEarly = signal
    throw new CliError('ERR_CLI_START_FAILED', `${signal} received while starting`)
  })
  earlyStop.catch(() => {})

  try {
    const assistant = launchRuntime({
      name: 'assistant',
      runtimeGuardModule,
      binary,
      host: config.native.host,
      port: native.port,
      cwd: layout.workspace,
      dirs: layout.assistantState,
      configDir: layout.managedDir,
      managedConfigDir: layout.policyDir,
      username: config.native.username,
      password: nativePassword,
      timezone: config.assistant.timezone,
      parent: io.env,
    })
    track(assistant, children, logger)
    let moderator: Child | undefined
    if (config.moderator.enabled) {
      moderator = launchRuntime({
        name: 'moderator',
        binary,
        host: '127.0.0.1',
        port: config.moderator.port,
        cwd: layout.moderatorState.cwd,
        dirs: layout.moderatorState,
        configDir: layout.moderatorDir,
        // Its own deny-all configuration is also its managed layer: nothing can loosen it.
        managedConfigDir: layout.moderatorDir,
        username: 'moderator',
        password: moderatorPassword,
        timezone: config.assistant.timezone,
        parent: io.env,
      })
      track(moderator, children, logger)
    }
    const [assistantReady, moderatorReady] = await Promise.race([
      Promise.all([
        waitUntilReady({
          child: assistant,
          authorization: basicAuth(config.native.username, nativePassword),
          deadline,
          directory: layout.workspace,
        }),
        moderator
          ? waitUntilReady({
              child: moderator,
              authorization: basicAuth('moderator', moderatorPassword),
              deadline,
            })
          : undefined,
      ]),
      earlyStop,
    ])
    logger.info({
      event: 'runtime_ready',
      child: 'assistant',
      url: assistantReady.url,
      version: assistantReady.version,
    })
    if (moderatorReady) {
      logger.info({
        event: 'runtime_ready',
        child: 'moderator',
        url: moderatorReady.url,
        version: moderatorReady.version,
      })
    }
    gateway = await startGateway({
      stateDir: layout.stateDir,
      workspace: layout.workspace,
      host: gatewayHost,
      port: config.gateway.port,
      nativeUrl: `http://${hostForUrl(config.native.host)}:${native.port}`,
      nativeUsername: config.native.username,
      nativePassword,
      allowedOrigins: origins,
      oauth: config.oauth,
      logger,
    })
  } catch (error) {
    await stopAll()
    if (stoppedEarly !== undefined) {
      logger.info({ event: 'stopped', reason: stoppedEarly }, 'agentgate stopped while starting')
      return { reason: stoppedEarly }
    }
    throw error
  }

  const mcpUrl = `http://${hostForUrl(displayHost(gatewayHost))}:${gateway.port}/mcp`
  const ownerKeyFile = relativeToStack(layout, layout.ownerKeyFile)
  logger.info(
    {
      event: 'ready',
      mcpUrl,
      ownerKeyFile: layout.ownerKeyFile,
      nativeUrl: `http://${hostForUrl(config.native.host)}:${native.port}`,
    },
    `agentgate is up: MCP endpoint ${mcpUrl}; owner key in ${ownerKeyFile} (send it as "Authorization: Bearer <key>")`,
  )

  const firstExit = Promise.race(children.map((child) => child.exit.then((info) => ({ child, info }))))
  const outcome = await Promise.race([
    firstExit.then((exit) => ({ kind: 'exit' as const, ...exit })),
    stopRequested.then((signal) => ({ kind: 'signal' as const, signal })),
  ])
  if (outcome.kind === 'signal') {
    logger.info({ event: 'stopping', reason: outcome.signal }, `received ${outcome.signal}: stopping`)
    await stopAll()
    logger.info({ event: 'stopped' }, 'agentgate stopped')
    return { reason: outcome.signal }
  }
  const why = `${outcome.child.name} runtime ${describeExit(outcome.info)}`
  logger.error(
    {
      event: 'child_exited',
      child: outcome.child.name,
      code: outcome.info.code,
      signal: outcome.info.signal,
    },
    why,
  )
  await stopAll()
  throw new CliError('ERR_CLI_CHILD_EXITED', `${why}: stopped the stack`)
}

function track(child: Child, children: Child[], logger: Logger): void {
  children.push(child)
  logger.info({ event: 'child_started', child: child.name, pid: child.pid })
  child.onLine((line, stream) => {
    if (line.trim().length === 0) return
    logger.info({ event: 'child_output', child: child.name, stream, line: line.slice(0, 2000) })
  })
}

/** Resolves with the first SIGINT/SIGTERM; later ones are absorbed while stopping. */
function signalPromise(): Promise<string> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals): void => resolve(signal)
    process.on('SIGINT', handler)
    process.on('SIGTERM', handler)
  })
}

function displayHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1'
  if (host === '::') return '::1'
  return host
}
