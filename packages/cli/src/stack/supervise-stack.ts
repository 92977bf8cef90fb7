import { describeExit } from '@sallyport/runtime-process'
import type { Logger } from 'pino'
import { CliError, type CliErrorCode } from '../errors.ts'
import { describeFailure } from '../exit-codes.ts'
import type { RunningStack } from './start-stack.ts'

/** Each process `up` supervises: how messages name it and the error (exit code) its exit gives. */
const CHILD_EXITS: Readonly<Record<string, { readonly what: string; readonly code: CliErrorCode }>> = {
  assistant: { what: 'assistant runtime', code: 'ERR_CLI_ASSISTANT_EXITED' },
  moderator: { what: 'moderator runtime', code: 'ERR_CLI_MODERATOR_EXITED' },
  scheduler: { what: 'scheduler', code: 'ERR_CLI_SCHEDULER_EXITED' },
}

/**
 * Supervises a running stack until the operator asks to stop or a process of it (a runtime, the
 * scheduler) exits. A stop request stops everything and resolves with the signal's name; a process
 * that exits stops the others (the gateway first, so its port closes) and throws the error whose
 * exit code names that process (10 assistant, 11 moderator, 12 scheduler; see `exit-codes.ts`),
 * its message naming the process and its own exit code or signal, so an orchestrator restarts the
 * whole stack and its operator knows what went first.
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
  const known = CHILD_EXITS[outcome.child.name]
  const what = known?.what ?? outcome.child.name
  const why = `${what} ${describeExit(outcome.info)}`
  const error = known
    ? new CliError(known.code, `${why}: stopped the stack`)
    : new Error(`${why}: stopped the stack (a process up does not know)`)
  logger.error(
    {
      event: 'child_exited',
      child: outcome.child.name,
      code: outcome.info.code,
      signal: outcome.info.signal,
      exitCode: describeFailure(error).exitCode,
    },
    why,
  )
  await stack.stopAll()
  throw error
}
