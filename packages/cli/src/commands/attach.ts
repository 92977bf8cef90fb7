import { spawn } from 'node:child_process'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { resolveBinary } from '../runtime/runtime-errors.ts'
import { overridesFromEnv } from '../stack/layout.ts'
import { requireStack } from '../stack/require-stack.ts'
import { readPasswordFile } from '../stack/secrets.ts'
import { loadStackConfig } from '../stack/stack-config.ts'
import { readStackEnv } from '../stack/stack-env.ts'
import { resolveStackPlan } from '../stack/stack-plan.ts'

export interface AttachOptions {
  readonly dir: string
  /** Native server URL (default: recorded in `state/stack.env`). */
  readonly url?: string | undefined
  readonly session?: string | undefined
  readonly continue?: boolean | undefined
}

/**
 * `sallyport attach`: the runtime's own terminal client, attached to the native server (a trusted
 * session: it bypasses the gateway). The username and password travel in the client's
 * environment (`OPENCODE_SERVER_USERNAME`/`OPENCODE_SERVER_PASSWORD`), never in its arguments.
 * Resolves with the client's exit code.
 */
export async function attach(options: AttachOptions, io: Io): Promise<number> {
  const layout = await requireStack(options.dir, overridesFromEnv(io.env))
  const config = await loadStackConfig(layout.configFile)
  // --url, else the URL the last start recorded (state/stack.env is read only then). Unlike the
  // gateway, attach never falls back to a port of sallyport.json alone.
  const recorded = options.url === undefined ? await readStackEnv(layout) : new Map<string, string>()
  const plan = resolveStackPlan({ layout, config, env: io.env, recorded, flags: { nativeUrl: options.url } })
  const { nativeUrl, nativePasswordFile, nativeUsername } = plan.gateway
  const url = options.url !== undefined || recorded.has('SALLYPORT_NATIVE_URL') ? nativeUrl : undefined
  if (!url)
    throw new CliError(
      'ERR_CLI_USAGE',
      'no native server URL recorded: run `sallyport up` first or pass --url',
    )
  const password = await readPasswordFile(nativePasswordFile.path, nativePasswordFile.shownAs)
  const binary = resolveBinary(io.env)
  const args = ['attach', url, '--dir', layout.workspace]
  if (options.session) args.push('--session', options.session)
  if (options.continue) args.push('--continue')
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(io.env)) {
    // No inherited credentials of any other server: OPENCODE_SERVER_* goes, other OPENCODE_* stays.
    if (value !== undefined && !key.startsWith('OPENCODE_SERVER_')) env[key] = value
  }
  env.OPENCODE_SERVER_USERNAME = nativeUsername
  env.OPENCODE_SERVER_PASSWORD = password
  const child = spawn(binary, args, { stdio: 'inherit', env })
  return new Promise((resolve, reject) => {
    child.once('error', (error) =>
      reject(new CliError('ERR_CLI_START_FAILED', `attach failed to start: ${error.message}`)),
    )
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : 1)))
  })
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }
  return numbers[signal]
}
