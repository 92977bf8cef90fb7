import { setTimeout as sleep } from 'node:timers/promises'
import { type SupervisedProcess, spawnProcessGroup } from '@sallyport/runtime-process'
import { askScheduler, daemonEntryPath, schedulerPaths } from '@sallyport/scheduler/stack'
import { CliError } from '../errors.ts'
import type { StackLayout } from './layout.ts'

/** Variables the scheduler process inherits: none that holds a secret (it reads only the native password file). */
const PASSED_ENV = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR'] as const

/** The scheduler process's environment: the locale and PATH of `env`, nothing else. */
export function schedulerEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of PASSED_ENV) {
    const value = env[name]
    if (value) out[name] = value
  }
  return out
}

/**
 * Starts the stack's scheduler process (`@sallyport/scheduler`'s daemon, this Node binary) and
 * waits until its control socket answers with its first task sync done. `onSpawn` gets the child at once, so a failed start
 * still stops it. A failed first task sync does not fail the start: the scheduler runs,
 * unhealthy, until a sync succeeds (spec, scheduler rule 9).
 */
export async function startScheduler(input: {
  readonly layout: StackLayout
  readonly env: NodeJS.ProcessEnv
  readonly deadline: number
  readonly earlyStop: Promise<never>
  readonly onSpawn: (child: SupervisedProcess) => void
}): Promise<{ child: SupervisedProcess; socket: string }> {
  const { socket } = schedulerPaths(input.layout.root)
  const child = spawnProcessGroup({
    name: 'scheduler',
    command: process.execPath,
    args: [daemonEntryPath(), '--dir', input.layout.root],
    env: schedulerEnv(input.env),
    cwd: input.layout.root,
  })
  input.onSpawn(child)
  const answering = (async () => {
    for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
      if (child.exited) {
        const tail = child.tail(5).join(' | ')
        throw new CliError(
          'ERR_CLI_START_FAILED',
          `the scheduler exited while starting${tail ? `: ${tail}` : ''}`,
        )
      }
      try {
        // Started once its first task sync is done (failed or not): `ready` then reports it.
        const status = await askScheduler(socket, { op: 'status' }, 2000)
        if (status.lastSync !== undefined) return
      } catch {
        // not yet listening
      }
      if (Date.now() >= input.deadline)
        throw new CliError('ERR_CLI_START_FAILED', 'the scheduler did not start in time')
      await sleep(delay)
    }
  })()
  await Promise.race([answering, input.earlyStop])
  return { child, socket }
}

/** The scheduler's part of `/health`: unhealthy from a failed task sync until one succeeds. */
export async function schedulerHealth(
  socket: string,
): Promise<{ ok: boolean; detail: Record<string, string> }> {
  try {
    const status = await askScheduler(socket, { op: 'status' }, 2000)
    return { ok: status.healthy, detail: { scheduler: status.healthy ? 'ok' : 'sync_failed' } }
  } catch {
    return { ok: false, detail: { scheduler: 'unavailable' } }
  }
}
