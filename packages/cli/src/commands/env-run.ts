import { spawn } from 'node:child_process'
import { readUserEnv } from '@sallyport/scheduler/stack'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { requireStack } from '../stack/require-stack.ts'

/**
 * `sallyport env run user -- <command> [args…]`: runs one command with the values of
 * `knowledge/env/user.env` added to this environment, and exits with its exit code. The values
 * reach that one process (and its children) only: never a runtime, never a log, never stdout.
 */
export async function envRun(
  options: { dir: string; scope: string; command: readonly string[] },
  io: Io,
): Promise<void> {
  if (options.scope !== 'user') throw new CliError('ERR_CLI_USAGE', 'the only environment scope is "user"')
  const [command, ...args] = options.command
  if (!command)
    throw new CliError(
      'ERR_CLI_USAGE',
      'name the command after --, e.g. `sallyport env run user -- ./sync.sh`',
    )
  const layout = await requireStack(options.dir)
  const values = await readUserEnv(layout.userEnvFile)
  const env: NodeJS.ProcessEnv = { ...io.env }
  for (const [name, value] of values) env[name] = value
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: 'inherit' })
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new CliError('ERR_CLI_USAGE', `cannot run ${JSON.stringify(command)} (${error.code ?? 'error'})`),
      ),
    )
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 + signalNumber(signal) : 1)))
  })
  process.exitCode = code
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }
  return numbers[signal] ?? 0
}
