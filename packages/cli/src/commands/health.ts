import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { overridesFromEnv } from '../stack/layout.ts'
import { requireStack } from '../stack/require-stack.ts'
import { loadStackConfig } from '../stack/stack-config.ts'
import { resolveStackPlan } from '../stack/stack-plan.ts'

export interface HealthOptions {
  readonly dir: string
  /** Give up after this long (default 3 000 ms). */
  readonly timeoutMs?: number
}

/**
 * `sallyport health`: exits 0 when this stack's gateway answers `GET /health` with `ok: true`,
 * else `ERR_CLI_CHECK_FAILED` (exit 9). The gateway's address comes from the stack plan (the same
 * `SALLYPORT_GATEWAY_HOST` / `gateway.host` and `gateway.port` that `up` binds), so a container
 * health check follows whatever port the stack file names. A wildcard bind is reached on loopback.
 */
export async function health(options: HealthOptions, io: Io): Promise<void> {
  const layout = await requireStack(options.dir, overridesFromEnv(io.env))
  const config = await loadStackConfig(layout.configFile)
  // Only the gateway is asked: state/stack.env plays no part in where it listens.
  const url = resolveStackPlan({ layout, config, env: io.env, recorded: new Map() }).gateway.healthUrl
  let ok = false
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 3_000) })
    ok = response.ok && ((await response.json()) as { ok?: unknown }).ok === true
  } catch {
    ok = false
  }
  if (!ok) throw new CliError('ERR_CLI_CHECK_FAILED', `the gateway at ${url} is not healthy`)
  io.out(`ok ${url}\n`)
}
