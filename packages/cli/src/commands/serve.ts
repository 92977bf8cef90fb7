import { CliError } from '../errors.ts'
import { startGateway } from '../gateway/start-gateway.ts'
import type { Io } from '../io.ts'
import { createCliLogger, type Logger } from '../logger.ts'
import { allowedOrigins } from '../stack/allowed-origins.ts'
import { overridesFromEnv } from '../stack/layout.ts'
import { requireStack } from '../stack/require-stack.ts'
import { readPasswordFile } from '../stack/secrets.ts'
import { loadStackConfig } from '../stack/stack-config.ts'
import { hostForUrl, readStackEnv } from '../stack/stack-env.ts'
import { assertSecretsOutsideWorkspace } from '../stack/workspace-guard.ts'

export interface ServeOptions {
  readonly dir: string
  readonly host?: string | undefined
  readonly port?: number | undefined
  /** The native server (default: `AGENTGATE_NATIVE_URL` of `state/stack.env`). */
  readonly nativeUrl?: string | undefined
  readonly nativeUsername?: string | undefined
  /** Default `state/native-password`. */
  readonly nativePasswordFile?: string | undefined
  readonly workspace?: string | undefined
  readonly stopSignal?: Promise<string>
  readonly logger?: Logger
}

/**
 * `agentgate serve`: the gateway alone, in front of an already running native server. Flags
 * override the stack configuration; a non-empty `GATEWAY_ALLOWED_ORIGINS` overrides
 * `gateway.allowedOrigins`.
 * Runs until SIGINT/SIGTERM.
 */
export async function serve(options: ServeOptions, io: Io): Promise<void> {
  const logger = options.logger ?? createCliLogger()
  const overrides = overridesFromEnv(io.env)
  const layout = await requireStack(options.dir, {
    ...overrides,
    ...(options.workspace ? { workspace: options.workspace } : {}),
  })
  await assertSecretsOutsideWorkspace(layout)
  const config = await loadStackConfig(layout.configFile)
  const recorded = await readStackEnv(layout)
  const nativeUrl =
    options.nativeUrl ??
    recorded.get('AGENTGATE_NATIVE_URL') ??
    (config.native.port === 'auto'
      ? undefined
      : `http://${hostForUrl(config.native.host)}:${config.native.port}`)
  if (!nativeUrl)
    throw new CliError('ERR_CLI_USAGE', 'no native server URL: pass --native-url or run `agentgate up` once')
  const password = await readPasswordFile(
    options.nativePasswordFile ?? layout.nativePassword,
    options.nativePasswordFile ? '--native-password-file' : 'state/native-password',
  )
  const gateway = await startGateway({
    stateDir: layout.stateDir,
    workspace: layout.workspace,
    host: options.host ?? io.env.AGENTGATE_GATEWAY_HOST ?? config.gateway.host,
    port: options.port ?? config.gateway.port,
    nativeUrl,
    nativeUsername: options.nativeUsername ?? config.native.username,
    nativePassword: password,
    allowedOrigins: allowedOrigins(io.env.GATEWAY_ALLOWED_ORIGINS, config.gateway.allowedOrigins),
    oauth: config.oauth,
    logger,
  })
  logger.info(
    { event: 'ready', mcpUrl: `${gateway.url.replace(/\/$/, '')}/mcp` },
    `gateway serving ${gateway.url}`,
  )
  const signal = await (options.stopSignal ??
    new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'))
      process.once('SIGTERM', () => resolve('SIGTERM'))
    }))
  logger.info({ event: 'stopping', reason: signal })
  await gateway.close()
}
