import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import { createFakeRuntime, type FakeRuntime, type FakeTurn } from '@sallyport/upstream-client/testing'
import { HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CHECK_AGENT, CHECK_METADATA_KEY, checkReadiness } from './check.js'

// The readiness check against the fake runtime: a session of its own with the chat profile and
// the chosen model, deleted afterwards whatever happens; `proven` only when the model answered.

type Answer = (turn: FakeTurn, rt: FakeRuntime) => void
let answer: Answer = (turn, rt) => rt.completeTurn(turn.sessionId, 'READY')
const turns: FakeTurn[] = []
const prompts: unknown[] = []
const fake = createFakeRuntime({
  onTurn(turn, rt) {
    turns.push(turn)
    answer(turn, rt)
  },
})
const server = setupServer(...fake.handlers)
const clients: UpstreamClient[] = []
beforeAll(() => {
  server.listen({ onUnhandledRequest: 'error' })
  server.events.on('request:start', async ({ request }) => {
    if (request.url.includes('prompt_async')) prompts.push(await request.clone().json())
  })
})
afterEach(() => {
  for (const c of clients.splice(0)) c.close()
  answer = (turn, rt) => rt.completeTurn(turn.sessionId, 'READY')
  prompts.length = 0
})
afterAll(() => server.close())

function runtime(): UpstreamClient {
  const client = createUpstreamClient(fake.clientOptions)
  clients.push(client)
  return client
}

describe('checkReadiness', () => {
  it('proves inference (never tool calls) with the chosen model in a chat session it deletes', async () => {
    const result = await checkReadiness({ runtime: runtime(), id: 'local', model: 'qwen2.5-coder:7b' })
    expect(result).toMatchObject({
      model: 'local/qwen2.5-coder:7b',
      inference: 'proven',
      toolCalls: 'not proven',
    })
    expect(turns.at(-1)?.agent).toBe(CHECK_AGENT)
    expect(prompts.at(-1)).toMatchObject({ model: { providerID: 'local', modelID: 'qwen2.5-coder:7b' } })
    expect(fake.state.sessions.size).toBe(0)
  })

  it('checks the model the runtime uses when none is named, and names it from the answer', async () => {
    const result = await checkReadiness({ runtime: runtime() })
    expect(result).toMatchObject({ model: 'fake/fake-1', inference: 'proven' })
    expect(prompts.at(-1)).not.toHaveProperty('model')
    expect(fake.state.sessions.size).toBe(0)
    await expect(checkReadiness({ runtime: runtime(), id: 'local' })).rejects.toThrow(/both id and model/)
  })

  it("reports the runtime's error with the provider's message (no key), and still deletes the session", async () => {
    answer = (turn, rt) =>
      rt.failTurn(turn.sessionId, {
        name: 'APIError',
        message:
          'Incorrect API key provided: sk-proj-AbCdEf0123456789xyz (connect ECONNREFUSED 10.0.0.5:8080)',
      })
    const result = await checkReadiness({ runtime: runtime(), id: 'local', model: 'm' })
    expect(result).toMatchObject({
      inference: 'failed',
      reason:
        'the runtime reported APIError: Incorrect API key provided: [redacted] (connect ECONNREFUSED 10.0.0.5:8080)',
    })
    expect(JSON.stringify(result)).not.toContain('sk-proj')
    expect(fake.state.sessions.size).toBe(0)
  })

  it('reports the first failed provider request the runtime retries instead of waiting the retries out', async () => {
    answer = (turn, rt) =>
      void rt.emit('session.status', {
        sessionID: turn.sessionId,
        status: {
          type: 'retry',
          attempt: 1,
          message: 'Unable to connect. Is the computer able to access the url? key=abc123def456ghi789jkl',
          next: Date.now() + 2_000,
        },
      })
    const result = await checkReadiness({ runtime: runtime(), id: 'local', model: 'm', timeoutMs: 10_000 })
    expect(result).toMatchObject({
      inference: 'failed',
      reason:
        'the runtime reported a failed provider request, which it retries (attempt 1): Unable to connect. Is the computer able to access the url? key=[redacted]',
    })
    expect(result.elapsedMs).toBeLessThan(10_000)
    expect(fake.state.sessions.size).toBe(0)
  })

  it('reports an error the runtime raises for the session without an answer (not a timeout)', async () => {
    answer = (turn, rt) =>
      void rt.emit('session.error', {
        sessionID: turn.sessionId,
        error: {
          name: 'ProviderModelNotFoundError',
          data: { message: 'model m of http://u:hunter2@10.0.0.5 not found in /home/op/.config/x.json' },
        },
      })
    const result = await checkReadiness({ runtime: runtime(), id: 'local', model: 'm', timeoutMs: 10_000 })
    expect(result).toMatchObject({
      inference: 'failed',
      reason:
        'the runtime reported ProviderModelNotFoundError: model m of http://10.0.0.5 not found in [path]',
    })
    expect(JSON.stringify(result)).not.toContain('hunter2')
    expect(fake.state.sessions.size).toBe(0)
  })

  it('fails after its deadline when no answer comes, and deletes the session', async () => {
    answer = () => {}
    const result = await checkReadiness({ runtime: runtime(), id: 'local', model: 'm', timeoutMs: 300 })
    expect(result).toMatchObject({ inference: 'failed', reason: 'no answer within 300 ms' })
    expect(fake.state.sessions.size).toBe(0)
  })

  it('stops waiting when aborted (Ctrl-C), and still deletes the session', async () => {
    const controller = new AbortController()
    // The turn starts and gets no answer; the caller gives up as soon as it has started.
    answer = () => controller.abort()
    const result = await checkReadiness({
      runtime: runtime(),
      id: 'local',
      model: 'm',
      signal: controller.signal,
    })
    expect(result).toMatchObject({ inference: 'failed', reason: 'interrupted' })
    expect(turns.length).toBeGreaterThan(0)
    expect(fake.state.sessions.size).toBe(0)
  })

  it('deletes the session the runtime made when the answer to its creation was lost', async () => {
    let created = 0
    server.use(
      http.post(fake.url('/session'), async ({ request }) => {
        const body = (await request.json()) as { metadata?: Record<string, unknown> }
        // The session carries the check's token.
        expect(Object.keys(body.metadata ?? {})).toEqual([CHECK_METADATA_KEY])
        fake.addSession({ title: 'sallyport preset check', metadata: body.metadata ?? {} })
        created++
        return new HttpResponse('lost', { status: 503 })
      }),
    )
    const before = fake.state.sessions.size
    await expect(checkReadiness({ runtime: runtime(), id: 'local', model: 'm' })).rejects.toMatchObject({
      code: 'ERR_PRESET_RUNTIME',
    })
    expect(created).toBe(1)
    expect(fake.state.sessions.size).toBe(before)
  })

  it('refuses a bad id or model before asking the runtime anything', async () => {
    const before = fake.requests.length
    await expect(checkReadiness({ runtime: runtime(), id: 'Bad', model: 'm' })).rejects.toMatchObject({
      code: 'ERR_PRESET_INVALID_ID',
    })
    expect(fake.requests.length).toBe(before)
  })
})
