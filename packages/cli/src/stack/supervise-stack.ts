import { describeExit } from '@sallyport/runtime-process'
import type { Logger } from 'pino'
import { CliError } from '../errors.ts'
import type { RunningStack } from './start-stack.ts'

/**
 * Supervises a running stack until the operator asks to stop or a process of it (a runtime, the
 * scheduler) exits. A stop request
 * stops everything and resolves with the signal's name; a runtime that exits stops the others and
 * throws `ERR_CLI_CHILD_EXITED` (exit 8), so an orchestrator restarts the whole stack.
 */
export async function superviseStack(
  stack: RunningStack,
  stopRequested: Promise<string>,
  logger: Logger,
): Promise<{ reason: string }> {
  const firstExit = Promise.race(stack.children.map((child) => child.exit.then((info) => ({ child, info }))))
  const outcome = await Promise.race([
    firstExit.then((exit) => ({ kind: 'exit' as const, ...exit })),
    stopRequested.then((signal) => ({ kind: 'signal' as const, signal })),
  ])
  if (outcome.kind === 'signal') {
    logger.info({ event: 'stopping', reason: outcome.signal }, `received ${outcome.signal}: stopping`)
    await stack.stopAll()
    logger.info({ event: 'stopped' }, 'sallyport stopped')
    return { reason: outcome.signal }
  }
  const what = outcome.child.name === 'scheduler' ? 'scheduler' : `${outcome.child.name} runtime`
  const why = `${what} ${describeExit(outcome.info)}`
  logger.error(
    {
      event: 'child_exited',
      child: outcome.child.name,
      code: outcome.info.code,
      signal: outcome.info.signal,
    },
    why,
  )
  await stack.stopAll()
  throw new CliError('ERR_CLI_CHILD_EXITED', `${why}: stopped the stack`)
}
