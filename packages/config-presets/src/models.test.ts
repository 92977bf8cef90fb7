import { delay, HttpResponse, http } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { listModels } from './models.js'

// One bounded GET <baseURL>/models: ids only, the key only as the bearer credential, every other
// answer reported as "does not list its models" (use the documented id) or as an error.

const server = setupServer()
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

const BASE = 'http://models.test:8080/v1'

describe('listModels', () => {
  it('returns the ids, sorted, without invalid ones, and sends the key as the bearer credential', async () => {
    let auth: string | null = null
    server.use(
      http.get(`${BASE}/models`, ({ request }) => {
        auth = request.headers.get('authorization')
        return HttpResponse.json({
          object: 'list',
          data: [
            { id: 'qwen2.5-coder:7b' },
            { id: 'llama3.1:8b' },
            { id: 'bad id\n' },
            { id: 42 },
            { id: 'llama3.1:8b' },
          ],
        })
      }),
    )
    expect(await listModels({ baseUrl: `${BASE}/`, key: 'sk-0123456789' })).toEqual({
      supported: true,
      models: ['llama3.1:8b', 'qwen2.5-coder:7b'],
      truncated: false,
    })
    expect(auth).toBe('Bearer sk-0123456789')
  })

  it.each([
    ['a 404', () => new HttpResponse('not here', { status: 404 }), 'HTTP 404'],
    [
      'HTML',
      () => new HttpResponse('<html>', { headers: { 'content-type': 'text/html' } }),
      'did not answer JSON',
    ],
    ['another JSON shape', () => HttpResponse.json({ models: ['x'] }), 'did not answer an OpenAI model list'],
    [
      'an answer over the size bound',
      () => HttpResponse.json({ data: [{ id: 'x'.repeat(2000) }] }),
      'more than 1000 bytes',
    ],
  ] as const)(
    'reports %s as "does not list its models", never the raw answer',
    async (_name, answer, reason) => {
      server.use(http.get(`${BASE}/models`, answer))
      const result = await listModels({ baseUrl: BASE, maxBytes: 1000 })
      expect(result).toEqual({ supported: false, reason: expect.stringContaining(reason) })
      expect(JSON.stringify(result)).not.toContain('not here')
    },
  )

  it('fails on a refused key and on a server that does not answer in time', async () => {
    server.use(http.get(`${BASE}/models`, () => new HttpResponse(null, { status: 401 })))
    await expect(listModels({ baseUrl: BASE, key: 'sk-wrong-0123' })).rejects.toMatchObject({
      code: 'ERR_PRESET_RUNTIME',
      message: expect.not.stringContaining('sk-wrong'),
    })
    server.use(
      http.get(`${BASE}/models`, async () => {
        await delay(2_000)
        return HttpResponse.json({ data: [] })
      }),
    )
    await expect(listModels({ baseUrl: BASE, timeoutMs: 100 })).rejects.toMatchObject({
      message: expect.stringContaining('did not answer within 100 ms'),
    })
  })

  it('refuses a base URL with credentials before sending anything', async () => {
    await expect(listModels({ baseUrl: 'http://u:secret@models.test/v1' })).rejects.toMatchObject({
      code: 'ERR_PRESET_INVALID_URL',
    })
  })
})
