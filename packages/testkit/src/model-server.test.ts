import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ModelServer, startModelServer } from './model-server.ts'

let server: ModelServer

beforeEach(async () => {
  server = await startModelServer()
})
afterEach(async () => {
  await server.close()
})

const TOOLS = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }]

function chat(
  messages: unknown[],
  extra: Record<string, unknown> = {},
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-affinity': 'ses_test' },
    body: JSON.stringify({ model: 'fake-1', stream: true, tools: TOOLS, messages, ...extra }),
    ...init,
  })
}

interface ToolCallDelta {
  index: number
  id: string
  type: string
  function: { name: string; arguments: string }
}
interface Chunk {
  id: string
  object: string
  model: string
  usage?: Record<string, number>
  choices: Array<{
    index: number
    finish_reason: string | null
    delta: { role?: string; content?: string; tool_calls?: ToolCallDelta[] }
  }>
}

/** Parses an SSE body into its JSON chunks; checks it ends with `[DONE]`. */
async function chunks(response: Response): Promise<Chunk[]> {
  const text = await response.text()
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''))
  expect(events.at(-1)).toBe('[DONE]')
  return events.slice(0, -1).map((event) => JSON.parse(event) as Chunk)
}

const contentOf = (parsed: Chunk[]): string =>
  parsed.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')

const user = (content: string) => ({ role: 'user', content })

describe('startModelServer', () => {
  it('lists its model', async () => {
    const response = await fetch(`${server.baseURL}/models`)
    expect(await response.json()).toMatchObject({ object: 'list', data: [{ id: 'fake-1', object: 'model' }] })
    expect(server.requests[0]?.kind).toBe('models')
  })

  it('streams a scripted text answer as chat.completion.chunk events', async () => {
    const marker = server.script([{ text: ['Hello', ', ', 'world'] }])
    const response = await chat([{ role: 'system', content: 'sys' }, user(`hi ${marker}`)])
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const parsed = await chunks(response)
    expect(parsed[0]).toMatchObject({ object: 'chat.completion.chunk', model: 'fake-1' })
    expect(parsed[0]?.choices[0]?.delta.role).toBe('assistant')
    expect(contentOf(parsed)).toBe('Hello, world')
    const last = parsed.at(-1)!
    expect(last.choices[0]?.finish_reason).toBe('stop')
    expect(last.usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
    })
    expect(new Set(parsed.map((chunk) => chunk.id)).size).toBe(1)
  })

  it('answers non-streaming requests with one chat.completion', async () => {
    const marker = server.script([{ text: 'plain' }])
    const response = await chat([user(marker)], { stream: false })
    expect(await response.json()).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { role: 'assistant', content: 'plain' }, finish_reason: 'stop' }],
      usage: { total_tokens: expect.any(Number) },
    })
  })

  it('runs a tool call round trip and advances to the next step', async () => {
    const marker = server.script([
      { toolCall: { name: 'bash', input: { command: 'ls' }, id: 'call_1' } },
      (request) => ({ text: `result was ${request.toolResults.join('|')}` }),
    ])
    const first = await chunks(await chat([user(`go ${marker}`)]))
    const call = first.find((chunk) => chunk.choices[0]?.delta?.tool_calls)?.choices[0]?.delta.tool_calls?.[0]
    expect(call).toEqual({
      index: 0,
      id: 'call_1',
      type: 'function',
      function: { name: 'bash', arguments: '{"command":"ls"}' },
    })
    expect(first.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls')

    const second = await chunks(
      await chat([
        user(`go ${marker}`),
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'call_1', type: 'function', function: call?.function }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
      ]),
    )
    expect(contentOf(second)).toBe('result was a.txt')
    expect(server.requestsFor(marker).map((r) => r.step)).toEqual([0, 1])
  })

  it('emits several tool calls of one step with increasing indexes', async () => {
    const marker = server.script([
      {
        text: 'two calls',
        toolCalls: [
          { name: 'read', input: { filePath: 'a' } },
          { name: 'read', input: { filePath: 'b' } },
        ],
      },
    ])
    const parsed = await chunks(await chat([user(marker)]))
    const calls = parsed.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? [])
    expect(calls.map((c: { index: number }) => c.index)).toEqual([0, 1])
    expect(calls[0]?.id).toMatch(/^call_/)
    expect(calls[0]?.id).not.toBe(calls[1]?.id)
    expect(contentOf(parsed)).toBe('two calls')
  })

  it('keys concurrent conversations by their own marker and step', async () => {
    const a = server.script([{ toolCall: { name: 'bash', input: {} } }, { text: 'A done' }], 'script-a')
    const b = server.script([{ text: 'B first' }], 'script-b')
    const assistantCall = { role: 'assistant', content: '', tool_calls: [] }
    const [ra, rb, ra2] = await Promise.all([
      chat([user(`x ${a}`)]).then(chunks),
      chat([user(`y ${b}`)]).then(chunks),
      chat([user(`x ${a}`), assistantCall, { role: 'tool', content: 'r' }]).then(chunks),
    ])
    expect(ra.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls')
    expect(contentOf(rb)).toBe('B first')
    expect(contentOf(ra2)).toBe('A done')
    expect(server.requestsFor('script-a')).toHaveLength(2)
    expect(server.requestsFor(b)).toHaveLength(1)
  })

  it('restarts a script when a newer user message carries the marker', async () => {
    const marker = server.script([{ text: 'first' }, { text: 'second' }])
    const history = [user(`one ${marker}`), { role: 'assistant', content: 'first' }, user(`again ${marker}`)]
    expect(contentOf(await chunks(await chat(history)))).toBe('first')
  })

  it('answers the default text without a marker, for unknown scripts and past the last step', async () => {
    const marker = server.script([{ text: 'only' }])
    const past = [user(marker), { role: 'assistant', content: 'only' }, user('no marker here')]
    for (const messages of [[user('hello')], [user('[[script:nope]]')], past]) {
      expect(contentOf(await chunks(await chat(messages)))).toBe('OK')
    }
    expect(server.requests.every((r) => r.answer === undefined)).toBe(true)
  })

  it('gives title requests (no tools) a fixed title, even with a marker in the text', async () => {
    const marker = server.script([{ text: 'scripted' }])
    const response = await chat(
      [{ role: 'system', content: 'You are a title generator.' }, user(`Generate a title: ${marker}`)],
      { tools: undefined },
    )
    expect(contentOf(await chunks(response))).toBe('Fake title')
    expect(server.requests[0]).toMatchObject({ kind: 'title', scriptId: undefined })
    expect(server.requestsFor(marker)).toHaveLength(0)
  })

  it('answers a scripted error with an OpenAI error body (400 invalid_request_error by default)', async () => {
    const marker = server.script([
      { error: { message: 'nope' } },
      { error: { status: 503, type: 'server_error' } },
    ])
    const response = await chat([user(marker)])
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      error: { message: 'nope', type: 'invalid_request_error', code: null, param: null },
    })
    const retryable = await chat([user(marker), { role: 'assistant', content: '' }])
    expect(retryable.status).toBe(503)
    expect(((await retryable.json()) as { error: { type: string } }).error.type).toBe('server_error')
  })

  it('turns a throwing step function into a non-retryable 400 naming the error', async () => {
    const marker = server.script([
      () => {
        throw new Error('bad script')
      },
    ])
    const response = await chat([user(marker)])
    expect(response.status).toBe(400)
    const body = (await response.json()) as { error: { type: string; message: string } }
    expect(body.error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('bad script'),
    })
    expect(server.requests[0]?.outcome).toBe('completed')
  })

  it('records every request with body, headers and session id', async () => {
    const marker = server.script([{ text: 'x' }])
    await (await chat([user(marker)])).text()
    const [recorded] = server.requests
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      kind: 'chat',
      sessionId: 'ses_test',
      scriptId: marker.slice(9, -2),
      step: 0,
      answer: { text: 'x' },
      outcome: 'completed',
    })
    expect(recorded?.body?.messages).toHaveLength(1)
    expect(recorded?.headers['content-type']).toBe('application/json')
  })

  it('stops a slow stream when the client disconnects', async () => {
    const marker = server.script([{ text: ['a', 'b', 'c', 'd'], intervalMs: 5_000 }])
    const controller = new AbortController()
    const response = await chat([user(marker)], {}, { signal: controller.signal })
    const reader = response.body!.getReader()
    await reader.read() // first chunk arrived: the stream is open
    controller.abort()
    const recorded = await server.waitForRequest((r) => r.outcome === 'aborted', 2_000)
    expect(recorded.scriptId).toBe(marker.slice(9, -2))
  })

  it('delays the first chunk by delayMs', async () => {
    const marker = server.script([{ text: 'late', delayMs: 300 }])
    const started = performance.now()
    expect(contentOf(await chunks(await chat([user(marker)])))).toBe('late')
    expect(performance.now() - started).toBeGreaterThanOrEqual(280)
  })

  it('waitForRequest rejects after its timeout', async () => {
    await expect(server.waitForRequest(() => false, 50)).rejects.toThrow(/no matching request/)
  })

  it('rejects invalid script ids and empty scripts when registering', () => {
    expect(() => server.script([{ text: 'x' }], 'bad id')).toThrow(TypeError)
    expect(() => server.script([])).toThrow(RangeError)
  })

  it('returns 404 for unknown routes and records them', async () => {
    const response = await fetch(`${server.url}/v1/embeddings`, { method: 'POST', body: '{}' })
    expect(response.status).toBe(404)
    expect(server.requests[0]?.kind).toBe('other')
  })

  it('closes while a slow stream is open', async () => {
    const marker = server.script([{ text: ['a', 'b'], intervalMs: 60_000 }])
    const response = await chat([user(marker)])
    await response.body!.getReader().read()
    await server.close()
    expect(server.requests[0]?.outcome).toBe('aborted')
    server = await startModelServer() // afterEach closes this one
  })
})

describe('moderation requests (model fake-mod)', () => {
  it('are answered by the moderation handler, never by a script, and recorded as moderation', async () => {
    const marker = server.script([{ text: 'scripted: must not answer the moderator' }])
    const seen: Array<string | undefined> = []
    server.onModeration((request) => {
      seen.push(request.input)
      return { text: '{"verdict":"block","category":"exfiltration"}' }
    })
    const response = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'fake-mod',
        stream: false,
        messages: [
          { role: 'system', content: 'You are the moderator.' },
          {
            role: 'user',
            content: `Classify:\n<untrusted-input abc123>\nsend it ${marker}\n</untrusted-input abc123>\nAnswer.`,
          },
        ],
      }),
    })
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> }
    expect(body.choices[0]?.message.content).toBe('{"verdict":"block","category":"exfiltration"}')
    expect(seen).toEqual([`send it ${marker}`])
    expect(server.requests.at(-1)?.kind).toBe('moderation')
    expect(server.requestsFor(marker)).toHaveLength(0)
    server.onModeration(() => ({ text: '{"verdict":"allow"}' }))
  })
})
