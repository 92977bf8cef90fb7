import type { GatewayLimits } from '@sallyport/gateway-server/config'
import type { Logger } from 'pino'
import { CliError } from '../errors.ts'
import type { StackLayout } from '../stack/layout.ts'
import type { OAuthConfig, StackConfig } from '../stack/stack-config.ts'
import type { StackPlan } from '../stack/stack-plan.ts'
import { knownSecretsOf } from './known-secrets.ts'

export interface StartGatewayOptions {
  /** The stack's `state/` (credentials, handle secret). */
  readonly stateDir: string
  readonly workspace: string
  readonly host: string
  readonly port: number
  readonly nativeUrl: string
  readonly nativeUsername: string
  readonly nativePassword: string
  readonly allowedOrigins: readonly string[]
  readonly oauth?: OAuthConfig | undefined
  /** `gateway.limits` of sallyport.json. */
  readonly limits?: GatewayLimits | undefined
  /** The moderator runtime (without it, every input the local screen escalates is blocked). */
  readonly moderator?: StartGatewayModerator | undefined
  readonly logger: Logger
  /** More of the assistant runtime's health (the scheduler's last sync), for `/health`. */
  readonly runtimeHealthExtra?: () => Promise<{ ok: boolean; detail: Record<string, string> }>
  /** The stack's secrets, removed by value from everything relayed (`known-secrets.ts`). */
  readonly knownSecrets?: () => readonly string[]
}

/** How the gateway reaches the moderator runtime, and `moderator.*` of sallyport.json. */
export interface StartGatewayModerator {
  readonly url: string
  readonly username: string
  readonly password: string
  readonly directory: string
  readonly model?: string
  readonly deadlineMs?: number
  readonly concurrency?: number
  readonly queueLimit?: number
}

/**
 * The gateway of a stack as `up` and `serve` start it: where it binds, the runtime it fronts, its
 * origins, OAuth and limits, and the stack's moderator runtime (unreachable, it blocks every input
 * the local screen escalates; it never lets one through unscreened).
 */
export function stackGatewayOptions(input: {
  readonly layout: StackLayout
  readonly config: StackConfig
  readonly plan: StackPlan
  readonly nativeUrl: string
  readonly nativeUsername: string
  readonly nativePassword: string
  readonly moderatorPassword: string
  readonly logger: Logger
}): StartGatewayOptions {
  const { layout, config, plan } = input
  return {
    stateDir: layout.stateDir,
    workspace: layout.workspace,
    host: plan.gateway.bindHost,
    port: plan.gateway.port,
    nativeUrl: input.nativeUrl,
    nativeUsername: input.nativeUsername,
    nativePassword: input.nativePassword,
    allowedOrigins: plan.gateway.allowedOrigins,
    oauth: config.oauth,
    limits: config.gateway.limits,
    moderator: {
      url: plan.moderator.url,
      username: plan.moderator.username,
      password: input.moderatorPassword,
      directory: layout.moderatorState.cwd,
      ...(config.moderator.model !== undefined && { model: config.moderator.model }),
      deadlineMs: config.moderator.deadlineMs,
      concurrency: config.moderator.concurrency,
      queueLimit: config.moderator.queueLimit,
    },
    logger: input.logger,
    knownSecrets: knownSecretsOf({
      authFile: layout.authFile,
      userConfigDir: layout.userConfigDir,
      fixed: [input.nativePassword, input.moderatorPassword],
    }),
  }
}

/** A gateway serving in this process. */
export interface RunningGateway {
  readonly url: string
  readonly port: number
  close(): Promise<void>
}

/**
 * Starts the gateway in-process: the credential store's hot-reloading key resolver, the
 * file-backed handle secret, and the runtime client pinned to the workspace. The server packages
 * are loaded on demand so the operator commands work without them. Throws `ERR_CLI_START_FAILED`.
 */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const [{ createKeyResolver, readHandleSecret }, gatewayServer, upstream] = await Promise.all([
    import('@sallyport/credentials'),
    import('@sallyport/gateway-server'),
    import('@sallyport/upstream-client'),
  ])
  // This process is the gateway's (`up`, `serve`): collect the old generation sooner, so the
  // garbage of long waits does not grow RSS for minutes (see tuneHeapForServer).
  gatewayServer.tuneHeapForServer()
  const keys = createKeyResolver({
    stateDir: options.stateDir,
    onReloadError: (error) =>
      options.logger.warn({ event: 'credentials_reload_failed', code: error.code }, error.message),
  })
  const handleSecret = await readHandleSecret(options.stateDir)
  const client = upstream.createUpstreamClient({
    // Turns by credential, few in flight (the runtime serves one at a time): one credential's
    // storm cannot push the others' requests to the back of the runtime's queue.
    ...gatewayServer.gatewayUpstreamOptions,
    baseUrl: options.nativeUrl,
    username: options.nativeUsername,
    password: options.nativePassword,
    directory: options.workspace,
  })
  let gateway: ReturnType<typeof gatewayServer.createGateway>
  try {
    gateway = gatewayServer.createGateway({
      keys,
      handleSecret,
      runtime: gatewayServer.runtimeFromUpstream(client),
      workspaceRoot: options.workspace,
      allowedOrigins: [...options.allowedOrigins],
      ...(options.oauth ? { oauth: options.oauth } : {}),
      ...(options.limits ? { limits: { ...options.limits } } : {}),
      ...(options.moderator ? { moderator: { ...options.moderator } } : {}),
      ...(options.runtimeHealthExtra ? { runtimeHealthExtra: options.runtimeHealthExtra } : {}),
      ...(options.knownSecrets ? { knownSecrets: options.knownSecrets } : {}),
      logger: options.logger.child({ component: 'gateway' }),
    })
  } catch (error) {
    keys.close()
    throw new CliError('ERR_CLI_START_FAILED', `gateway configuration rejected: ${(error as Error).message}`)
  }
  let server: Awaited<ReturnType<typeof gateway.listen>>
  try {
    server = await gateway.listen({ host: options.host, port: options.port })
  } catch (error) {
    keys.close()
    await gateway.close().catch(() => {})
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') {
      throw new CliError(
        'ERR_CLI_PORT_IN_USE',
        `${options.host}:${options.port} is already in use: change gateway.port`,
      )
    }
    throw new CliError(
      'ERR_CLI_START_FAILED',
      `gateway could not listen (${code ?? (error as Error).message})`,
    )
  }
  return {
    url: server.url,
    port: server.port,
    async close() {
      await gateway.close()
      keys.close()
      const maybeClose = (client as { close?: () => unknown }).close
      if (typeof maybeClose === 'function') await maybeClose.call(client)
    },
  }
}
