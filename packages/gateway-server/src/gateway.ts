import { AsyncLocalStorage } from 'node:async_hooks'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { createHandleCodec, createOwnershipSigner, type HandleKind } from '@sallyport/handles'
import { createUpstreamClient } from '@sallyport/upstream-client'
import { createWorkspaceGuard, type WorkspaceGuard } from '@sallyport/workspace-guard'
import { type GatewayLimits, type OAuthOptions, parseAllowedOrigins } from './config.js'
import { fairnessKey } from './fairness.js'
import { createApp, type GatewayApp } from './http/app.js'
import { requestIdSource } from './http/audit.js'
import { createCredentialLimiter, resolveLimits } from './http/limits.js'
import { listen, type RunningServer } from './http/listen.js'
import { createOAuthVerifier } from './http/oauth.js'
import { createLogger, flushLogger, type Logger } from './logger.js'
import { createServerFactory } from './mcp/server-factory.js'
import { createModerationScreening } from './moderation/moderation-screening.js'
import { createModerator, type Moderator } from './moderation/moderator.js'
import type { KeyResolverLike } from './principal.js'
import { createRedactor } from './redact.js'
import { drainableRuntime } from './runtime/drain.js'
import type { RuntimePort } from './runtime/port.js'
import type { ScreeningHook } from './screening.js'
import { cachedOwnershipSigner } from './sessions/ownership-cache.js'

export const GATEWAY_VERSION = '0.1.0'

export interface GatewayOptions {
  /** Resolves bearer keys (and mapped OAuth subjects) to principals: `@sallyport/credentials`' resolver. */
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
  /**
   * Secrets the stack knows (its model providers' API keys, its passwords), asked on each rewrite
   * of relayed text: every occurrence becomes `[redacted]` whatever its shape (a provider's error
   * or a model may quote a key). Keep it cheap: it is called for every relayed string.
   */
  knownSecrets?: () => readonly string[]
  /** Or a ready guard (tests). */
  guard?: WorkspaceGuard
  /** `GATEWAY_ALLOWED_ORIGINS`: exact browser origins allowed on `/mcp`. */
  allowedOrigins?: string | readonly string[]
  /** Optional OAuth resource-server settings. */
  oauth?: OAuthOptions
  /**
   * The moderator runtime: what the local screen escalates is classified there. Without it every
   * escalated input is blocked (`moderator_unavailable`); ordinary input still flows.
   */
  moderator?: ModeratorConnection | Moderator
  /** Replaces the whole screening (tests). Default: the local screen, then the moderator. */
  screening?: ScreeningHook
  logger?: Logger
  now?: () => number
  handleLifetimesMs?: Partial<Record<HandleKind, number>>
  /** Largest accepted request body. Default 4 MiB. Same as `limits.maxRequestBodyBytes`. */
  maxRequestBodyBytes?: number
  /** Connection and per-credential limits (`GatewayLimits`); each has a default. */
  limits?: Partial<GatewayLimits>
  /**
   * What else decides whether the assistant runtime counts as healthy (the stack's scheduler:
   * a failed task sync marks it unhealthy until a sync succeeds). `ok: false` makes `/health`
   * answer 503 with `runtime: 'unhealthy'`; `detail` is added to the body as it is.
   */
  runtimeHealthExtra?: () => Promise<{ ok: boolean; detail: Record<string, string> }>
}

/** How the gateway reaches the moderator runtime. */
export interface ModeratorConnection {
  /** e.g. `http://127.0.0.1:4097` */
  url: string
  username?: string
  password: string
  /** The moderator runtime's working directory (pinned on every request). */
  directory: string
  /** `provider/model`; default the runtime's `small_model`, else its `model`. */
  model?: string
  /** Per-input deadline (queue wait included). Default 20 000 ms. */
  deadlineMs?: number
  /** Classifications at once. Default 2. */
  concurrency?: number
  /** Inputs waiting beyond those; more are answered `moderator_unavailable`. Default 32. */
  queueLimit?: number
  /** Inputs of one credential waiting; more of its inputs are answered `moderator_unavailable`. Default a quarter of `queueLimit`. */
  queueLimitPerCredential?: number
}

/**
 * `/health`: ok while the agent runtime answers; checked at most every 2 s, so probes cost
 * nothing. Also says whether the moderator answers (without it, suspicious input is blocked).
 */
function runtimeHealth(
  runtime: RuntimePort,
  moderator: Moderator | undefined,
  now: () => number,
  extra?: GatewayOptions['runtimeHealthExtra'],
): () => Promise<
  Record<string, unknown> & {
    ok: boolean
    runtime: 'ok' | 'unhealthy' | 'unavailable'
    moderator: 'ok' | 'unavailable'
  }
> {
  type Extra = Awaited<ReturnType<NonNullable<GatewayOptions['runtimeHealthExtra']>>>
  let checkedAt = Number.NEGATIVE_INFINITY
  let last: Promise<[boolean, boolean, Extra | undefined]> = Promise.resolve([false, false, undefined])
  return async () => {
    if (now() - checkedAt >= 2000) {
      checkedAt = now()
      last = Promise.all([
        runtime.healthy().catch(() => false),
        moderator ? moderator.reachable().catch(() => false) : Promise.resolve(false),
        extra ? extra().catch(() => ({ ok: false, detail: {} })) : Promise.resolve(undefined),
      ])
    }
    const [healthy, moderated, more] = await last
    const ok = healthy && (more?.ok ?? true)
    return {
      ok,
      runtime: !healthy ? 'unavailable' : ok ? 'ok' : 'unhealthy',
      moderator: moderated ? 'ok' : 'unavailable',
      ...more?.detail,
    }
  }
}

const isModerator = (value: ModeratorConnection | Moderator): value is Moderator =>
  typeof (value as Moderator).classify === 'function'

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
  const limits = resolveLimits({
    ...(options.maxRequestBodyBytes !== undefined && { maxRequestBodyBytes: options.maxRequestBodyBytes }),
    ...options.limits,
  })
  const { maxRequestBodyBytes } = limits
  const codec = createHandleCodec({
    secret: options.handleSecret,
    ...(options.handleLifetimesMs && { lifetimesMs: options.handleLifetimesMs }),
    ...(options.now && { now: options.now }),
  })
  // Each session record is verified once per credential (a bounded cache of verdicts, each
  // bound to the exact record it judged): listings see the same sessions again and again.
  const signer = cachedOwnershipSigner(createOwnershipSigner({ secret: options.handleSecret }))
  if (!options.guard && !options.workspaceRoot)
    throw new TypeError('createGateway: workspaceRoot is required')
  const guard = options.guard ?? createWorkspaceGuard({ root: options.workspaceRoot as string })
  // One redactor per gateway: the root's realpath is resolved here, once.
  const redactor = createRedactor({
    ...(options.workspaceRoot !== undefined && { workspaceRoot: options.workspaceRoot }),
    ...(options.knownSecrets && { knownSecrets: options.knownSecrets }),
  })
  const oauth = options.oauth ? createOAuthVerifier(options.oauth) : undefined
  const moderatorClient =
    options.moderator && !isModerator(options.moderator)
      ? createUpstreamClient({
          baseUrl: options.moderator.url,
          ...(options.moderator.username !== undefined && { username: options.moderator.username }),
          password: options.moderator.password,
          directory: options.moderator.directory,
        })
      : undefined
  const given = options.moderator
  const moderator =
    given === undefined
      ? undefined
      : isModerator(given)
        ? given
        : createModerator({
            client: moderatorClient as NonNullable<typeof moderatorClient>,
            ...(given.model !== undefined && { model: given.model }),
            ...(given.deadlineMs !== undefined && { deadlineMs: given.deadlineMs }),
            ...(given.concurrency !== undefined && { concurrency: given.concurrency }),
            ...(given.queueLimit !== undefined && { queueLimit: given.queueLimit }),
            ...(given.queueLimitPerCredential !== undefined && {
              queueLimitPerParty: given.queueLimitPerCredential,
            }),
            // Credentials take turns for the moderator as they do for the runtime.
            fairnessKey,
          })
  const allowedOrigins = parseAllowedOrigins(options.allowedOrigins)
  // Aborted when the gateway starts to close: the calls that wait answer with the state as it
  // stands instead of being cut (runtime/drain.ts).
  const draining = new AbortController()
  const factory = createServerFactory({
    codec,
    signer,
    runtime: drainableRuntime(options.runtime, draining.signal),
    guard,
    screening: options.screening ?? createModerationScreening(moderator),
    redactor,
    logger,
    version: GATEWAY_VERSION,
    ...(options.now && { now: options.now }),
  })
  const onError = (error: Error): void => {
    logger.error({ event: 'mcp_error', errorName: error.name }, 'mcp handler error')
  }
  // What the SDK reports while it handles a request waits for that request's answer: a 4xx is the
  // client's fault (a message that is not JSON-RPC, a wrong header), logged at warn, so that a key
  // holder cannot fill the error level; anything else, and whatever comes after the answer, is
  // the gateway's (error).
  const reported = new AsyncLocalStorage<{ errors: Error[]; answered: boolean }>()
  const sdk = createMcpHandler(factory, {
    legacy: 'stateless',
    onerror: (error) => {
      const request = reported.getStore()
      if (request && !request.answered) request.errors.push(error)
      else onError(error)
    },
    maxRequestBodySize: maxRequestBodyBytes,
  })
  const mcp: Pick<typeof sdk, 'fetch' | 'close'> = {
    async fetch(request, fetchOptions) {
      const pending = { errors: [] as Error[], answered: false }
      let status: number | undefined
      try {
        const response = await reported.run(pending, () => sdk.fetch(request, fetchOptions))
        status = response.status
        return response
      } finally {
        pending.answered = true
        const clientFault = status !== undefined && status >= 400 && status < 500
        for (const error of pending.errors) {
          if (clientFault)
            logger.warn({ event: 'mcp_client_error', errorName: error.name, status }, 'mcp request refused')
          else onError(error)
        }
      }
    },
    close: () => sdk.close(),
  }
  const app = createApp({
    resolver: options.keys,
    oauth,
    allowedOrigins,
    mcp,
    logger,
    health: runtimeHealth(options.runtime, moderator, options.now ?? Date.now, options.runtimeHealthExtra),
    newRequestId: requestIdSource(),
    limiter: createCredentialLimiter(limits),
    maxBatch: limits.maxBatch,
    maxRequestBodyBytes,
  })
  const servers = new Set<RunningServer>()
  return {
    fetch: app.fetch,
    handle: app.handle,
    async listen(at = {}) {
      const server = await listen(app, { ...at, limits, onError })
      servers.add(server)
      logger.info({ event: 'listening', url: server.url }, 'gateway listening')
      return server
    },
    async close() {
      // No new connections; the waits answer now; the answers in progress are sent (within the
      // servers' grace), then every connection is closed.
      const closing = [...servers].map((s) => s.close())
      draining.abort()
      await Promise.all(closing)
      servers.clear()
      await mcp.close()
      // Deletes the moderation sessions still in flight (none outlives the gateway).
      await moderator?.close()
      moderatorClient?.close()
      options.runtime.close?.()
      // The last audit lines, gathered by a buffering destination, are written before close returns.
      await flushLogger(logger)
    },
  }
}
