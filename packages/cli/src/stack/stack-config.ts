import { readFile } from 'node:fs/promises'
import {
  AllowedOriginsSchema,
  DEFAULT_LIMITS,
  GatewayLimitsSchema,
  OAuthOptionsSchema,
} from '@sallyport/gateway-server/config'
import { DEFAULT_RUNTIME_USERNAME } from '@sallyport/runtime-process'
import { isTimeZone } from '@sallyport/scheduler/stack'
import { z } from 'zod'
import { CliError } from '../errors.ts'

/** The native server's default port (spec: "native server bind 127.0.0.1:3810 default"). */
export const DEFAULT_NATIVE_PORT = 3810
/** The native server's Basic auth user unless `native.username` names another (the runtime's own default). */
export const DEFAULT_NATIVE_USERNAME = DEFAULT_RUNTIME_USERNAME
/** The moderator's port (spec: "moderator port 4097 on container loopback"). */
export const DEFAULT_MODERATOR_PORT = 4097
/** The moderator runtime's fixed bind host. */
export const MODERATOR_HOST = '127.0.0.1'
export const DEFAULT_GATEWAY_PORT = 8787

const Port = z.number().int().min(1).max(65535)
const Host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9.:_-]+$/, 'must be a host name or an IP address')
/** OAuth resource-server settings written by `sallyport config oauth`: the gateway's own schema. */
export type OAuthConfig = z.output<typeof OAuthOptionsSchema>

/** True when `zone` is an IANA time zone this Node knows (the scheduler's check: one definition). */
export { isTimeZone }

/**
 * `sallyport.json`: the operator's intent. `up` derives `state/stack.env` from it on every start.
 * `native.port` is a number, or `"auto"`: 3810, or a free port when 3810 is taken on a fresh
 * setup (the choice is recorded in `state/stack.env` and kept from then on).
 */
export const StackConfigSchema = z
  .object({
    version: z.literal(1),
    gateway: z
      .object({
        host: Host.default('127.0.0.1'),
        port: Port.default(DEFAULT_GATEWAY_PORT),
        /** Exact browser origins allowed on `/mcp` (`GATEWAY_ALLOWED_ORIGINS`); empty: none. */
        allowedOrigins: AllowedOriginsSchema,
        /**
         * Connection and per-credential limits, written out by `init` so operators see and tune
         * them: the gateway's own defaults and bounds. Each omitted field takes its default.
         */
        limits: GatewayLimitsSchema.default({ ...DEFAULT_LIMITS }),
      })
      .strict(),
    native: z
      .object({
        host: Host.default('127.0.0.1'),
        port: z.union([Port, z.literal('auto')]).default('auto'),
        username: z
          .string()
          .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 letters, digits, dots, dashes or underscores')
          .default(DEFAULT_NATIVE_USERNAME),
      })
      .strict(),
    /**
     * The moderator runtime, always part of the stack (escalated input is classified there; the
     * spec has no off switch). `model`: `provider/model` from the assistant's providers; default
     * the assistant's `small_model`, else its `model`.
     */
    moderator: z
      .object({
        port: Port.default(DEFAULT_MODERATOR_PORT),
        model: z
          .string()
          .regex(/^[^/\s]+\/\S+$/, 'must be "provider/model", e.g. "anthropic/claude-haiku-4-5"')
          .optional(),
        /** Per-input deadline of a classification, queue wait included. */
        deadlineMs: z.number().int().min(1_000).max(120_000).default(20_000),
        /** Classifications at once. */
        concurrency: z.number().int().min(1).max(16).default(2),
        /** Escalated inputs waiting for a classification; beyond it they are blocked. */
        queueLimit: z.number().int().min(0).max(1_000).default(32),
      })
      .strict(),
    assistant: z.object({ timezone: z.string().refine(isTimeZone, 'must be an IANA time zone') }).strict(),
    /**
     * Older stacks wrote `"scheduler": { "enabled": false }`: accepted, and means nothing.
     * Activation lives in `scheduler.enabled` of `config/akm/config.json` (writable in the
     * container, where this file is mounted read-only).
     */
    scheduler: z
      .object({
        enabled: z.literal(false, {
          error:
            'activation moved to scheduler.enabled of config/akm/config.json (`sallyport task resume <id>`); remove this key',
        }),
      })
      .strict()
      .optional(),
    oauth: OAuthOptionsSchema.optional(),
  })
  .strict()
  .superRefine((config, ctx) => {
    const clash = portClash(stackListeners(config))
    if (clash) ctx.addIssue({ code: 'custom', path: clash.path, message: clash.message })
  })
export type StackConfig = z.infer<typeof StackConfigSchema>

/** One socket the stack binds: the setting that names it, its host and port. */
export interface Listener {
  readonly setting: 'gateway.port' | 'native.port' | 'moderator.port'
  readonly host: string
  readonly port: number
}

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]'])
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1'])

/** True when binding the same port on `a` and on `b` would collide. */
export function hostsOverlap(a: string, b: string): boolean {
  if (a === b || WILDCARD_HOSTS.has(a) || WILDCARD_HOSTS.has(b)) return true
  // `localhost` may resolve to either loopback address.
  return (a === 'localhost' || b === 'localhost') && LOOPBACK_HOSTS.has(a) && LOOPBACK_HOSTS.has(b)
}

/**
 * The sockets of a stack: the gateway, the native server (when its port is known: a number, or
 * `nativePort`, what `"auto"` resolved to) and the moderator (always on loopback).
 */
export function stackListeners(
  config: Pick<StackConfig, 'gateway' | 'native' | 'moderator'>,
  overrides: { gatewayHost?: string; nativePort?: number } = {},
): Listener[] {
  const nativePort = overrides.nativePort ?? config.native.port
  return [
    {
      setting: 'gateway.port',
      host: overrides.gatewayHost ?? config.gateway.host,
      port: config.gateway.port,
    },
    ...(nativePort === 'auto'
      ? []
      : [{ setting: 'native.port' as const, host: config.native.host, port: nativePort }]),
    { setting: 'moderator.port' as const, host: MODERATOR_HOST, port: config.moderator.port },
  ]
}

/** The first two listeners that would bind the same port, as a one-line problem; else `undefined`. */
export function portClash(listeners: readonly Listener[]): { path: string[]; message: string } | undefined {
  for (const [i, a] of listeners.entries()) {
    for (const b of listeners.slice(i + 1)) {
      if (a.port === b.port && hostsOverlap(a.host, b.host)) {
        return {
          path: b.setting.split('.'),
          message: `${b.port} is also ${a.setting}: the gateway, the native server and the moderator each need their own port`,
        }
      }
    }
  }
  return undefined
}

/** The host's time zone, or UTC when it cannot be told. */
export function detectTimeZone(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.TZ?.replace(/^:/, '')
  if (fromEnv && isTimeZone(fromEnv)) return fromEnv
  const resolved = Intl.DateTimeFormat().resolvedOptions().timeZone
  return resolved && isTimeZone(resolved) ? resolved : 'UTC'
}

/**
 * The configuration a fresh `init` seeds. `container`: the gateway binds every interface of the
 * container (`0.0.0.0`), so a port published by the engine reaches it; on a host it binds
 * loopback only.
 */
export function defaultStackConfig(timezone: string, options: { container?: boolean } = {}): StackConfig {
  return {
    version: 1,
    gateway: {
      host: options.container ? '0.0.0.0' : '127.0.0.1',
      port: DEFAULT_GATEWAY_PORT,
      allowedOrigins: [],
      limits: { ...DEFAULT_LIMITS },
    },
    native: { host: '127.0.0.1', port: 'auto', username: DEFAULT_NATIVE_USERNAME },
    moderator: { port: DEFAULT_MODERATOR_PORT, deadlineMs: 20_000, concurrency: 2, queueLimit: 32 },
    assistant: { timezone },
  }
}

/** Validates parsed JSON: `{ value }` or `{ errors }` (one line each, with the field path). */
export function validateStackConfig(input: unknown): { value: StackConfig } | { errors: string[] } {
  const moderator = (input as { moderator?: unknown } | null)?.moderator
  if (moderator && typeof moderator === 'object' && 'enabled' in moderator) {
    return {
      errors: [
        'moderator.enabled: the moderator is always part of the stack (suspicious input is never sent unscreened); remove this key',
      ],
    }
  }
  const parsed = StackConfigSchema.safeParse(input)
  if (parsed.success) return { value: parsed.data }
  return {
    errors: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
  }
}

/**
 * Reads and validates `sallyport.json`. Throws `ERR_CLI_STACK_MISSING` when it does not exist and
 * `ERR_CLI_CONFIG_INVALID` (first problem named) when it is not valid.
 */
export async function loadStackConfig(file: string, shownAs = 'sallyport.json'): Promise<StackConfig> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CliError('ERR_CLI_STACK_MISSING', `${shownAs} not found: run \`sallyport init\` first`)
    }
    throw new CliError('ERR_CLI_IO', `cannot read ${shownAs} (${(error as NodeJS.ErrnoException).code})`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new CliError('ERR_CLI_CONFIG_INVALID', `${shownAs} is not valid JSON`)
  }
  const result = validateStackConfig(json)
  if ('errors' in result) {
    const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more)` : ''
    throw new CliError('ERR_CLI_CONFIG_INVALID', `${shownAs}: ${result.errors[0]}${more}`)
  }
  return result.value
}
