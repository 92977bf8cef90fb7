import type { LogFormat } from '../console-format.ts'
import { CliError } from '../errors.ts'
import { stackGatewayOptions, startGateway } from '../gateway/start-gateway.ts'
import type { Io } from '../io.ts'
import { createCliLogger, type Logger } from '../logger.ts'
import { overridesFromEnv } from '../stack/layout.ts'
import { requireStack } from '../stack/require-stack.ts'
import { readPasswordFile } from '../stack/secrets.ts'
import { assertSecretsOutsideWorkspace } from '../stack/secrets-outside-workspace.ts'
import { loadStackConfig } from '../stack/stack-config.ts'
import { readStackEnv } from '../stack/stack-env.ts'
import { resolveStackPlan } from '../stack/stack-plan.ts'
import { warnIfNoModel } from './model-warning.ts'
import { logFormatOf } from './up.ts'

export interface ServeOptions {
  readonly dir: string
  readonly host?: string | undefined
  readonly port?: number | undefined
  /** The native server (default: `SALLYPORT_NATIVE_URL` of `state/stack.env`). */
  readonly nativeUrl?: string | undefined
  readonly nativeUsername?: string | undefined
  /** Default `state/native-password`. */
  readonly nativePasswordFile?: string | undefined
  readonly workspace?: string | undefined
  readonly stopSignal?: Promise<string>
  readonly logger?: Logger
  /** `auto` (default): human lines on a terminal, JSON lines otherwise. */
  readonly logFormat?: LogFormat
}

/**
 * `sallyport serve`: the gateway alone, in front of an already running native server (and the
 * stack's moderator runtime, for what the local screen escalates). Flags
 * override the stack configuration; a non-empty `GATEWAY_ALLOWED_ORIGINS` overrides
 * `gateway.allowedOrigins`.
 * Runs until SIGINT/SIGTERM.
 */
export async function serve(options: ServeOptions, io: Io): Promise<void> {
  const logger = options.logger ?? createCliLogger(undefined, 'info', logFormatOf(options.logFormat))
  const overrides = overridesFromEnv(io.env)
  const layout = await requireStack(options.dir, {
    ...overrides,
    ...(options.workspace ? { workspace: options.workspace } : {}),
  })
  await assertSecretsOutsideWorkspace(layout)
  const config = await loadStackConfig(layout.configFile)
  const plan = resolveStackPlan({
    layout,
    config,
    env: io.env,
    recorded: await readStackEnv(layout),
    flags: {
      host: options.host,
      port: options.port,
      nativeUrl: options.nativeUrl,
      nativeUsername: options.nativeUsername,
      nativePasswordFile: options.nativePasswordFile,
    },
  })
  const { nativeUrl, nativePasswordFile } = plan.gateway
  if (!nativeUrl)
    throw new CliError('ERR_CLI_USAGE', 'no native server URL: pass --native-url or run `sallyport up` once')
  const password = await readPasswordFile(nativePasswordFile.path, nativePasswordFile.shownAs)
  const gateway = await startGateway(
    stackGatewayOptions({
      layout,
      config,
      plan,
      nativeUrl,
      nativeUsername: plan.gateway.nativeUsername,
      nativePassword: password,
      moderatorPassword: await readPasswordFile(
        plan.moderator.passwordFile.path,
        plan.moderator.passwordFile.shownAs,
      ),
      logger,
    }),
  )
  logger.info(
    // The bound URL, not plan.gateway.mcpUrl: `--port 0` binds a port the system picks.
    { event: 'ready', mcpUrl: `${gateway.url.replace(/\/$/, '')}/mcp` },
    `gateway serving ${gateway.url}`,
  )
  void warnIfNoModel(logger, {
    baseUrl: nativeUrl,
    username: plan.gateway.nativeUsername,
    password,
    directory: layout.workspace,
  })
  const signal = await (options.stopSignal ??
    new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'))
      process.once('SIGTERM', () => resolve('SIGTERM'))
    }))
  logger.info({ event: 'stopping', reason: signal })
  await gateway.close()
}
