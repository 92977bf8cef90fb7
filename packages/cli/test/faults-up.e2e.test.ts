import { type ModelServer, startModelServer } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CHILD_EXIT_CODES,
  type Cleanups,
  childDeath,
  moderatorHang,
  newStack,
  problemsOfChildDeath,
  problemsOfModeratorHang,
  type ScenarioStack,
  type StackChild,
} from '../bench/fault-scenarios.mjs'

// Faults under `sallyport up` (issue 18), through the BUILT CLI with the real runtimes and the
// scripted model. The scenarios are bench/fault-scenarios.mjs, shared with `pnpm bench:faults`,
// which judges their results with the same `problemsOf*` functions.

let model: ModelServer
let stack: ScenarioStack
const cleanups: Cleanups = []
beforeAll(async () => {
  model = await startModelServer()
  stack = await newStack(model, cleanups)
}, 60_000)
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await model?.close()
})

describe('up: a process of the stack is killed (SIGKILL)', () => {
  it.each<StackChild>(['assistant', 'moderator', 'scheduler'])(
    '%s: up stops the rest and exits with the code that names it; no process of the stack is left, no port open',
    async (child) => {
      const result = await childDeath({ model, child, stack })
      process.stdout.write(
        `faults: ${child} killed -> up exit ${result.exitCode} after ${result.deathToExitMs} ms, ` +
          `${result.processes} processes checked, ${result.survivors.length} left\n`,
      )
      expect(result.exitCode).toBe(CHILD_EXIT_CODES[child])
      expect(problemsOfChildDeath(result)).toEqual([])
    },
    240_000,
  )
})

describe('up: the moderator runtime hangs (SIGSTOP)', () => {
  it('suspicious input is refused at the deadline, never reaching the assistant; ordinary input runs; /health and `sallyport health` answer at once; all is well once it continues', async () => {
    const result = await moderatorHang({ model, deadlineMs: 5_000 })
    process.stdout.write(
      `faults: moderator hung -> suspicious ${result.blocked.answer} in ${result.blocked.ms} ms, ordinary ` +
        `${result.ordinary.status} in ${result.ordinary.ms} ms (${result.baseline.ms} ms before), /health ` +
        `${result.healthHung.status} in ${result.healthHung.ms} ms, allowed again ${result.recoverMs} ms after SIGCONT\n`,
    )
    expect(result.blocked.answer).toBe('moderator_unavailable')
    expect(problemsOfModeratorHang(result)).toEqual([])
  }, 300_000)
})
