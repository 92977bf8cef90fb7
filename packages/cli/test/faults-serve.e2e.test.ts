import { type ModelServer, startModelServer } from '@sallyport/testkit'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { problemsOfRuntimeRestart, runtimeRestart } from '../bench/fault-scenarios.mjs'

// The runtime behind `sallyport serve` dies mid-turn and comes back (issue 18), through the BUILT
// CLI with the real runtime and the scripted model. The scenario is bench/fault-scenarios.mjs,
// shared with `pnpm bench:faults`. The cut-off job ends when the gateway calls the run dead (60 s
// without a sign of life), so this test takes a minute and a half.

let model: ModelServer
beforeAll(async () => {
  model = await startModelServer()
})
afterAll(async () => {
  await model?.close()
})

it('a runtime killed mid-turn: calls answer upstream_unavailable at once, the gateway recovers when it is back on its port (no restart), the cut-off job reads failed', async () => {
  const result = await runtimeRestart({ model, rounds: 2 })
  process.stdout.write(
    `faults: runtime down -> ${result.down.filter((c) => c.answer === 'upstream_unavailable').length}/` +
      `${result.down.length} calls upstream_unavailable (max ${Math.max(...result.down.map((c) => c.ms))} ms); ` +
      `answering ${result.recoverMs} ms after it was back; cut-off job ${result.cutOff.status} ` +
      `(${result.cutOff.error}) ${result.cutOff.afterKillMs} ms after the kill\n`,
  )
  expect(result.down.map((c) => c.answer)).toEqual(result.down.map(() => 'upstream_unavailable'))
  expect(result.cutOff.status).toBe('failed')
  expect(problemsOfRuntimeRestart(result)).toEqual([])
}, 400_000)
