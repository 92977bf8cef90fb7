import { selectAllowedOrigins } from '@sallyport/gateway-server/config'
import type { StackLayout } from './layout.ts'
import {
  DEFAULT_NATIVE_PORT,
  type Listener,
  MODERATOR_HOST,
  type StackConfig,
  stackListeners,
} from './stack-config.ts'
import { connectHost, httpUrl } from './stack-env.ts'

/** The moderator runtime's fixed Basic auth user. */
export const MODERATOR_USERNAME = 'moderator'

/** A password file and how messages name it. */
export interface PasswordFile {
  readonly path: string
  /** `state/native-password`, or the flag that named the file. */
  readonly shownAs: string
}

/** One process of the stack that answers a health request (what `doctor` probes). */
export interface HealthTarget {
  readonly name: 'gateway' | 'assistant runtime' | 'moderator runtime'
  /** Where a client connects (a wildcard bind means loopback). */
  readonly host: string
  readonly port: number
  readonly url: string
  /** Basic auth of a runtime: its user and password file; none for the gateway. */
  readonly basicAuth?: { readonly username: string; readonly passwordFile: PasswordFile }
  /** The JSON field that is `true` in a healthy answer: `ok` (gateway) or `healthy` (runtime). */
  readonly healthyField: 'ok' | 'healthy'
  /** The setting of sallyport.json that names the port. */
  readonly setting: Listener['setting']
}

/** Command-line flags that override the stack file (`up --host`; `serve --host --port --native-…`). */
export interface StackPlanFlags {
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly nativeUrl?: string | undefined
  readonly nativeUsername?: string | undefined
  readonly nativePasswordFile?: string | undefined
}

/** Everything {@link resolveStackPlan} derives the plan from. */
export interface StackPlanInput {
  readonly layout: StackLayout
  readonly config: StackConfig
  /** The process environment (`SALLYPORT_GATEWAY_HOST`, `GATEWAY_ALLOWED_ORIGINS`, `SALLYPORT_IMAGE`). */
  readonly env: NodeJS.ProcessEnv
  /** `state/stack.env` of the last start; an empty map when there is none. */
  readonly recorded: ReadonlyMap<string, string>
  readonly flags?: StackPlanFlags
  /**
   * The port `up` is about to start the native server on (`"auto"` resolved now). Given, the
   * gateway forwards there; without it, to what the last `up` recorded.
   */
  readonly nativePort?: number | undefined
}

/** Where every process of a stack listens and how it is reached. See {@link resolveStackPlan}. */
export interface StackPlan {
  readonly gateway: {
    /** `--host` > `SALLYPORT_GATEWAY_HOST` > `gateway.host`. */
    readonly bindHost: string
    readonly port: number
    /** Where a client on this machine connects: the bind host, loopback for a wildcard. */
    readonly displayHost: string
    readonly mcpUrl: string
    readonly healthUrl: string
    /** `GATEWAY_ALLOWED_ORIGINS` when it names any, else `gateway.allowedOrigins`. */
    readonly allowedOrigins: string[]
    /** In the image (`SALLYPORT_IMAGE=1`) with a loopback bind: nothing outside the container reaches it. */
    readonly loopbackInImage: boolean
    /** The native server the gateway forwards to; `undefined` when none is known yet. */
    readonly nativeUrl: string | undefined
    readonly nativeUsername: string
    readonly nativePasswordFile: PasswordFile
  }
  readonly native: {
    readonly host: string
    /** A number in sallyport.json, the port given, or the one recorded for `"auto"`; else unknown. */
    readonly port: number | undefined
    readonly url: string | undefined
    readonly username: string
    readonly passwordFile: PasswordFile
  }
  readonly moderator: {
    readonly host: string
    readonly port: number
    readonly url: string
    readonly username: string
    readonly passwordFile: PasswordFile
  }
  /** The sockets the stack binds (for the port-clash check). */
  readonly listeners: Listener[]
  /** What `doctor` probes: gateway, assistant runtime and moderator. */
  readonly healthTargets: HealthTarget[]
}

/** A plan made with the native port given (`up`): the native server's port and URL are known. */
export type StackPlanWithNativePort = StackPlan & {
  readonly native: { readonly port: number; readonly url: string }
}

/**
 * Derives where the stack's processes listen and how they are reached, from the stack file, the
 * environment, the last recorded start and the flags. Pure: `up`, `serve`, `doctor` and `health`
 * all take their hosts, ports, URLs and password files from here.
 *
 * @example
 * const plan = resolveStackPlan({ layout, config, env: process.env, recorded: await readStackEnv(layout) })
 * plan.gateway.mcpUrl // 'http://127.0.0.1:8787/mcp'
 */
export function resolveStackPlan(
  input: StackPlanInput & { readonly nativePort: number },
): StackPlanWithNativePort
export function resolveStackPlan(input: StackPlanInput): StackPlan
export function resolveStackPlan(input: StackPlanInput): StackPlan {
  const { layout, config, env, recorded } = input
  const flags = input.flags ?? {}
  const bindHost = flags.host ?? env.SALLYPORT_GATEWAY_HOST ?? config.gateway.host
  const gatewayPort = flags.port ?? config.gateway.port
  const displayHost = connectHost(bindHost)
  const nativePort = input.nativePort ?? knownNativePort(config, recorded)
  const nativeUrl = nativePort === undefined ? undefined : httpUrl(config.native.host, nativePort)
  const nativePasswordFile: PasswordFile = {
    path: layout.nativePassword,
    shownAs: 'state/native-password',
  }
  const moderatorPasswordFile: PasswordFile = {
    path: layout.moderatorPassword,
    shownAs: 'state/moderator-password',
  }
  const native = {
    host: config.native.host,
    port: nativePort,
    url: nativeUrl,
    username: config.native.username,
    passwordFile: nativePasswordFile,
  }
  const moderator = {
    host: MODERATOR_HOST,
    port: config.moderator.port,
    url: httpUrl(MODERATOR_HOST, config.moderator.port),
    username: MODERATOR_USERNAME,
    passwordFile: moderatorPasswordFile,
  }
  const gateway = {
    bindHost,
    port: gatewayPort,
    displayHost,
    mcpUrl: `${httpUrl(displayHost, gatewayPort)}/mcp`,
    healthUrl: `${httpUrl(displayHost, gatewayPort)}/health`,
    allowedOrigins: selectAllowedOrigins(env.GATEWAY_ALLOWED_ORIGINS, config.gateway.allowedOrigins),
    loopbackInImage: env.SALLYPORT_IMAGE === '1' && isLoopback(bindHost),
    nativeUrl:
      flags.nativeUrl ??
      (input.nativePort !== undefined
        ? nativeUrl
        : (recorded.get('SALLYPORT_NATIVE_URL') ??
          (config.native.port === 'auto' ? undefined : httpUrl(config.native.host, config.native.port)))),
    nativeUsername: flags.nativeUsername ?? config.native.username,
    nativePasswordFile: flags.nativePasswordFile
      ? { path: flags.nativePasswordFile, shownAs: '--native-password-file' }
      : nativePasswordFile,
  }
  // A native server not started yet is probed where "auto" starts first.
  const probedNativePort = nativePort ?? DEFAULT_NATIVE_PORT
  const healthTargets: HealthTarget[] = [
    {
      name: 'gateway',
      host: displayHost,
      port: gatewayPort,
      url: gateway.healthUrl,
      healthyField: 'ok',
      setting: 'gateway.port',
    },
    {
      name: 'assistant runtime',
      host: native.host,
      port: probedNativePort,
      url: `${httpUrl(native.host, probedNativePort)}/global/health`,
      basicAuth: { username: native.username, passwordFile: nativePasswordFile },
      healthyField: 'healthy',
      setting: 'native.port',
    },
    {
      name: 'moderator runtime',
      host: moderator.host,
      port: moderator.port,
      url: `${moderator.url}/global/health`,
      basicAuth: { username: moderator.username, passwordFile: moderatorPasswordFile },
      healthyField: 'healthy',
      setting: 'moderator.port',
    },
  ]
  return {
    gateway,
    native,
    moderator,
    listeners: stackListeners(
      gatewayPort === config.gateway.port
        ? config
        : { ...config, gateway: { ...config.gateway, port: gatewayPort } },
      {
        gatewayHost: bindHost,
        ...(nativePort === undefined ? {} : { nativePort }),
      },
    ),
    healthTargets,
  }
}

/**
 * The native server's port when it is known without choosing one: a number in sallyport.json, or
 * for `"auto"` a valid port recorded in `state/stack.env`; else `undefined` (a fresh setup).
 */
export function knownNativePort(
  config: Pick<StackConfig, 'native'>,
  recorded: ReadonlyMap<string, string>,
): number | undefined {
  if (config.native.port !== 'auto') return config.native.port
  const port = Number(recorded.get('SALLYPORT_NATIVE_PORT'))
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? port : undefined
}

/** True for a loopback host name or address (`localhost`, `127.x.y.z`, `::1`). */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.')
}
