import { delay, HttpResponse, http } from 'msw'
import { describe, expect, it } from 'vitest'
import { UpstreamError } from '../src/index.ts'
import { useFakeRuntime } from './support/msw.ts'

const { fake, server, client } = useFakeRuntime()

describe('per-call options', () => {
  it('a caller abort rejects with the signal reason, not an UpstreamError', async () => {
    server.use(
      http.get(fake.url('/session/status'), async () => {
        await delay('infinite')
        return HttpResponse.json({})
      }),
    )
    const controller = new AbortController()
    const pending = client().sessionStatus({ signal: controller.signal })
    controller.abort(new Error('gateway request cancelled'))
    const error = await pending.catch((reason: unknown) => reason)
    expect(error).toEqual(new Error('gateway request cancelled'))
    expect(UpstreamError.isInstance(error)).toBe(false)
  })

  it('an already aborted signal fails without a request', async () => {
    const before = fake.requests.length
    await expect(client().health({ signal: AbortSignal.abort(new Error('early')) })).rejects.toThrow('early')
    expect(fake.requests.length).toBe(before)
  })

  it('timeoutMs per call overrides the client default', async () => {
    server.use(
      http.get(fake.url('/global/health'), async () => {
        await delay(300)
        return HttpResponse.json({ healthy: true, version: '1.18.33' })
      }),
    )
    const c = client({ timeoutMs: 50 })
    await expect(c.health()).rejects.toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT' })
    await expect(c.health({ timeoutMs: 5_000 })).resolves.toMatchObject({ healthy: true })
  })

  it('a 2xx body that is not JSON is ERR_UPSTREAM_SCHEMA', async () => {
    server.use(
      http.get(
        fake.url('/global/health'),
        () => new HttpResponse('{"healthy":tru', { headers: { 'content-type': 'application/json' } }),
      ),
    )
    await expect(client().health()).rejects.toMatchObject({ code: 'ERR_UPSTREAM_SCHEMA', status: 200 })
  })

  it('an unreadable 2xx body never reaches the error, not even through the JSON.parse cause', async () => {
    // JSON.parse quotes the start of a bad body in its message; a config body holds API keys.
    const key = 'sk-Fk9Q7x'
    server.use(
      http.get(
        fake.url('/config'),
        () => new HttpResponse(key, { headers: { 'content-type': 'application/json' } }),
      ),
    )
    const error = await client()
      .getConfig()
      .catch((reason: unknown) => reason)
    expect(error).toMatchObject({ code: 'ERR_UPSTREAM_SCHEMA', status: 200 })
    const texts: string[] = [JSON.stringify(error), String(error)]
    for (let link: unknown = error; link instanceof Error; link = link.cause)
      texts.push(link.message, link.stack ?? '', JSON.stringify(link), String(link))
    expect((error as Error).cause).toBeInstanceOf(Error)
    for (const text of texts) expect(text).not.toContain(key.slice(3))
  })

  it('an HTML fallback page (the runtime’s SPA for unknown routes) is ERR_UPSTREAM_SCHEMA', async () => {
    server.use(
      http.get(
        fake.url('/agent'),
        () => new HttpResponse('<html></html>', { headers: { 'content-type': 'text/html' } }),
      ),
    )
    await expect(client().listAgents()).rejects.toMatchObject({ code: 'ERR_UPSTREAM_SCHEMA', status: 200 })
  })

  it('a custom fetch is used for every request', async () => {
    const seen: string[] = []
    const c = client({
      fetch: async (input, init) => {
        const request = new Request(input, init)
        seen.push(new URL(request.url).pathname)
        return fetch(request)
      },
    })
    await c.health()
    await c.listPermissions()
    expect(seen).toEqual(['/global/health', '/permission'])
  })

  describe('a read that got no answer is sent once more', () => {
    it('a GET that hangs the first time succeeds on its second try', async () => {
      let calls = 0
      server.use(
        http.get(fake.url('/session/status'), async () => {
          calls++
          if (calls === 1) await delay('infinite')
          return HttpResponse.json({})
        }),
      )
      await expect(client({ timeoutMs: 100 }).sessionStatus()).resolves.toEqual({})
      expect(calls).toBe(2)
    })

    it('a GET whose connection fails is sent once more, and fails after two tries', async () => {
      let calls = 0
      server.use(
        http.get(fake.url('/session/status'), () => {
          calls++
          return HttpResponse.error()
        }),
      )
      await expect(client().sessionStatus()).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NETWORK' })
      expect(calls).toBe(2)
    })

    it('a write that timed out is not sent again (it may have been applied)', async () => {
      let calls = 0
      server.use(
        http.post(fake.url('/session/:id/abort'), async () => {
          calls++
          await delay('infinite')
          return HttpResponse.json(true)
        }),
      )
      await expect(
        client({ timeoutMs: 100 }).abortSession('ses_0123456789abcdefABCDEF'),
      ).rejects.toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT' })
      expect(calls).toBe(1)
    })

    it('an HTTP error answer is not retried', async () => {
      let calls = 0
      server.use(
        http.get(fake.url('/session/status'), () => {
          calls++
          return new HttpResponse('busy', { status: 503 })
        }),
      )
      await expect(client().sessionStatus()).rejects.toMatchObject({ code: 'ERR_UPSTREAM_HTTP', status: 503 })
      expect(calls).toBe(1)
    })

    it('a read the caller aborted is not sent again', async () => {
      let calls = 0
      server.use(
        http.get(fake.url('/session/status'), async () => {
          calls++
          await delay('infinite')
          return HttpResponse.json({})
        }),
      )
      const controller = new AbortController()
      const pending = client().sessionStatus({ signal: controller.signal })
      await expect.poll(() => calls).toBe(1)
      controller.abort(new Error('caller gone'))
      await expect(pending).rejects.toThrow('caller gone')
      expect(calls).toBe(1)
    })
  })
})
