import { randomBytes } from 'node:crypto'
import { createHandleCodec, createOwnershipSigner, type HandleKind } from '@agentgate/handles'
import { createWorkspaceGuard, type WorkspaceGuard } from '@agentgate/workspace-guard'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { createApp, type GatewayApp } from './http/app.js'
import { parseAllowedOrigins } from './http/cors.js'
import { listen, type RunningServer } from './http/listen.js'
import { createOAuthVerifier, type OAuthOptions } from './http/oauth.js'
import { createLogger, type Logger } from './logger.js'
import { createServerFactory } from './mcp/server-factory.js'
import type { KeyResolverLike } from './principal.js'
import { createRedactor } from './redact.js'
import type { RuntimePort } from './runtime/port.js'
import { passThroughScreening, type ScreeningHook } from './screening.js'

export const GATEWAY_VERSION = '0.1.0'

export interface GatewayOptions {
  /** Resolves bearer keys (and mapped OAuth subjects) to principals: `@agentgate/credentials`' resolver. */
  keys: KeyResolverLike
  /** The file-backed handle secret (at least 32 bytes). */
  handleSecret: Uint8Array
  /** The agent runtime, usually `runtimeFromUpstream(createUpstreamClient(...))`. */
  runtime: RuntimePort
  /**
   * Workspace root for the read/full workspace tools (`/work` in the image). Required unless
   * `guard` is given. Paths under it (or its realpath) in anything relayed from the runtime are
   * shown relative to it; every other absolute path, and every upstream id, is replaced. With
   * only `guard` given, no root is known and every absolute path counts as outside.
   */
  workspaceRoot?: string
  /** Or a ready guard (tests). */
  guard?: WorkspaceGuard
  /** `GATEWAY_ALLOWED_ORIGINS`: exact browser origins allowed on `/mcp`. */
  allowedOrigins?: string | readonly string[]
  /** Optional OAuth resource-server settings. */
  oauth?: OAuthOptions
  /** Screening of messages, answers and permission messages. Default: pass-through. */
  screening?: ScreeningHook
  logger?: Logger
  now?: () => number
  handleLifetimesMs?: Partial<Record<HandleKind, number>>
  /** Largest accepted request body. Default 4 MiB. */
  maxRequestBodyBytes?: number
}

/** `/health`: ok while the agent runtime answers; checked at most every 2 s, so probes cost nothing. */
function runtimeHealth(
  runtime: RuntimePort,
  now: () => number,
): () => Promise<{ ok: boolean; runtime: 'ok' | 'unavailable' }> {
  let checkedAt = Number.NEGATIVE_INFINITY
  let last: Promise<boolean> = Promise.resolve(false)
  return async () => {
    if (now() - checkedAt >= 2000) {
      checkedAt = now()
      last = runtime.healthy().catch(() => false)
    }
    const healthy = await last
    return { ok: healthy, runtime: healthy ? 'ok' : 'unavailable' }
  }
}

export interface Gateway extends GatewayApp {
  /** Starts serving on `node:http`; port 0 picks a free port. */
  listen(options?: { host?: string; port?: number }): Promise<RunningServer>
  close(): Promise<void>
}

/**
 * Creates the gateway. Every option is validated here, so misconfiguration fails at start-up
 * (`TypeError`/`RangeError`), never on the first request.
 */
export function createGateway(options: GatewayOptions): Gateway {
  if (!options.keys || typeof options.keys.resolve !== 'function')
    throw new TypeError('createGateway: keys resolver is required')
  if (!options.runtime) throw new TypeError('createGateway: runtime is required')
  const logger = options.logger ?? createLogger()
  const maxRequestBodyBytes = options.maxRequestBodyBytes ?? 4 * 1024 * 1024
  if (!Number.isSafeInteger(maxRequestBodyBytes) || maxRequestBodyBytes < 1024)
    throw new RangeError('maxRequestBodyBytes must be ≥ 1024')
  const codec = createHandleCodec({
    secret: options.handleSecret,
    ...(options.handleLifetimesMs && { lifetimesMs: options.handleLifetimesMs }),
    ...(options.now && { now: options.now }),
  })
  const signer = createOwnershipSigner({ secret: options.handleSecret })
  if (!options.guard && !options.workspaceRoot)
    throw new TypeError('createGateway: workspaceRoot is required')
  const guard = options.guard ?? createWorkspaceGuard({ root: options.workspaceRoot as string })
  // One redactor per gateway: the root's realpath is resolved here, once.
  const redactor = createRedactor(
    options.workspaceRoot !== undefined ? { workspaceRoot: options.workspaceRoot } : {},
  )
  const oauth = options.oauth ? createOAuthVerifier(options.oauth) : undefined
  const allowedOrigins = parseAllowedOrigins(options.allowedOrigins)
  const factory = createServerFactory({
    codec,
    signer,
    runtime: options.runtime,
    guard,
    screening: options.screening ?? passThroughScreening,
    redactor,
    logger,
    version: GATEWAY_VERSION,
    ...(options.now && { now: options.now }),
  })
  const onError = (error: Error): void => {
    logger.error({ event: 'mcp_error', errorName: error.name }, 'mcp handler error')
  }
  const mcp = createMcpHandler(factory, {
    legacy: 'stateless',
    onerror: onError,
    maxRequestBodySize: maxRequestBodyBytes,
  })
  const app = createApp({
    resolver: options.keys,
    oauth,
    allowedOrigins,
    mcp,
    logger,
    health: runtimeHealth(options.runtime, options.now ?? Date.now),
    newRequestId: () => randomBytes(8).toString('hex'),
  })
  const servers = new Set<RunningServer>()
  return {
    fetch: app.fetch,
    async listen(at = {}) {
      const server = await listen(app, { ...at, maxRequestBodyBytes, onError })
      servers.add(server)
      logger.info({ event: 'listening', url: server.url }, 'gateway listening')
      return server
    },
    async close() {
      await Promise.all([...servers].map((s) => s.close()))
      servers.clear()
      await mcp.close()
      options.runtime.close?.()
    },
  }
}
