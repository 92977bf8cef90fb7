import { type ModelServer, startModelServer } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './cli-process.ts'
import { newScriptedStack, type Stops, upScriptedStack } from './stack-fixture.ts'

// doctor's model readiness check against the real runtime with a model that answers: `ok`, named.
// (The no-provider failure is in first-run.e2e.test.ts.)

let model: ModelServer
const stops: Stops = []
let dir: string
beforeAll(async () => {
  model = await startModelServer()
  dir = await newScriptedStack(model, stops)
  await upScriptedStack(dir, stops)
}, 120_000)
afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  await model?.close()
})

describe('doctor: model readiness with a model that answers (built CLI, real runtime)', () => {
  it('passes and names the model the runtime used', async () => {
    const run = await runCli(['doctor', '--dir', dir, '--json'])
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string; detail: string }[] }
    const readiness = report.checks.find((c) => c.name === 'model readiness')
    expect(readiness?.detail).toMatch(/^fake\/fake-1 answered through the runtime in \d+\.\d s$/)
    expect(readiness?.status).toBe('ok')
    expect(run.code).toBe(0)
  }, 120_000)
})
