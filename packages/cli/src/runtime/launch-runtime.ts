import { type Child, spawnChild } from './child.ts'
import { buildRuntimeEnv, type RuntimeEnvInput } from './runtime-env.ts'

export interface LaunchRuntimeOptions extends RuntimeEnvInput {
  readonly name: string
  readonly binary: string
  readonly host: string
  readonly port: number
  /** The runtime's project directory. */
  readonly cwd: string
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'
}

/**
 * Starts `opencode serve` bound to `host:port` with HTTP Basic from the environment (the password
 * is never in argv). Logs go to stdout/stderr at WARN so the supervisor can relay them.
 */
export function launchRuntime(options: LaunchRuntimeOptions): Child {
  const args = [
    'serve',
    '--hostname',
    options.host,
    '--port',
    String(options.port),
    '--print-logs',
    '--log-level',
    options.logLevel ?? 'WARN',
  ]
  return spawnChild({
    name: options.name,
    command: options.binary,
    args,
    env: buildRuntimeEnv(options),
    cwd: options.cwd,
  })
}
