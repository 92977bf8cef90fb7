import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import { createFakeRuntime, type FakeRuntime, type FakeTurn } from '@sallyport/upstream-client/testing'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { StackPlan } from '../../stack/stack-plan.ts'
import { check } from './check.ts'
import { modelReadinessChecks } from './model-readiness-check.ts'

type Answer = (turn: FakeTurn, rt: FakeRuntime) => void
const ready: Answer = (turn, rt) => rt.completeTurn(turn.sessionId, 'READY')
let answer: Answer = ready
const fake = createFakeRuntime({ onTurn: (turn, rt) => answer(turn, rt) })
const server = setupServer(...fake.handlers)
const clients: UpstreamClient[] = []
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => {
  for (const c of clients.splice(0)) c.close()
  answer = ready
})
afterAll(() => server.close())

function runtime(): UpstreamClient {
  const client = createUpstreamClient(fake.clientOptions)
  clients.push(client)
  return client
}

const plan = {
  gateway: {
    nativeUrl: 'http://127.0.0.1:1',
    nativeUsername: 'opencode',
    nativePasswordFile: { path: '/nonexistent/native-password', shownAs: 'state/native-password' },
  },
} as unknown as Pick<StackPlan, 'gateway'>
const running = [check('assistant runtime', 'ok', 'healthy')]

describe('modelReadinessChecks', () => {
  it('warns, without asking anything, when the assistant runtime is not running', async () => {
    const checks = await modelReadinessChecks(plan, [check('assistant runtime', 'warn', 'not running')], {
      workspace: '/w',
    })
    expect(checks).toEqual([
      expect.objectContaining({
        name: 'model readiness',
        status: 'warn',
        detail: expect.stringMatching(/not checked/),
      }),
    ])
    expect(fake.state.sessions.size).toBe(0)
  })

  it('passes when the model the runtime uses by default answers, and names it', async () => {
    const [result] = await modelReadinessChecks(plan, running, { workspace: '/w', runtime: runtime() })
    expect(result).toMatchObject({ name: 'model readiness', status: 'ok' })
    expect(result?.detail).toMatch(/^fake\/fake-1 answered through the runtime in \d+\.\d s$/)
  })

  it("fails with the provider's error, keys removed, and says how to configure a provider", async () => {
    answer = (turn, rt) =>
      rt.failTurn(turn.sessionId, {
        name: 'APIError',
        message: 'Invalid API key: sk-live-0123456789abcdefXYZ',
      })
    const [result] = await modelReadinessChecks(plan, running, { workspace: '/w', runtime: runtime() })
    expect(result).toMatchObject({
      name: 'model readiness',
      status: 'fail',
      detail: 'fake/fake-1 cannot answer: the runtime reported APIError: Invalid API key: [redacted]',
      fix: expect.stringContaining('sallyport preset save'),
    })
  })

  it('fails at the first retry of an unreachable provider, long before its deadline', async () => {
    answer = (turn, rt) =>
      void rt.emit('session.status', {
        sessionID: turn.sessionId,
        status: { type: 'retry', attempt: 1, message: 'Unable to connect.', next: Date.now() + 2_000 },
      })
    const started = Date.now()
    const [result] = await modelReadinessChecks(plan, running, {
      workspace: '/w',
      runtime: runtime(),
      timeoutMs: 20_000,
    })
    expect(result?.status).toBe('fail')
    expect(result?.detail).toMatch(/which it retries \(attempt 1\): Unable to connect\.$/)
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(fake.state.sessions.size).toBe(0)
  })

  it('fails clearly when the password file of the runtime cannot be read', async () => {
    const [result] = await modelReadinessChecks(plan, running, { workspace: '/w' })
    expect(result).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^not checked: /) })
  })
})
