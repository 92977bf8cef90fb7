import { createUpstreamClient } from '@sallyport/upstream-client'
import { describe, expect, it, vi } from 'vitest'
import {
  fairnessKey,
  gatewayUpstreamOptions,
  meteredFetch,
  withFairnessKey,
  withReadMeter,
} from './fairness.js'

describe('fairnessKey', () => {
  it('is the credential of the request being handled, across awaits, and undefined outside one', async () => {
    expect(fairnessKey()).toBeUndefined()
    const seen = await Promise.all(
      ['alice', 'bob'].map((who) =>
        withFairnessKey(who, async () => {
          await new Promise((resolve) => setTimeout(resolve, 5))
          return fairnessKey()
        }),
      ),
    )
    expect(seen).toEqual(['alice', 'bob'])
    expect(fairnessKey()).toBeUndefined()
  })
})

describe('meteredFetch', () => {
  it('asks for uncompressed answers and counts what a call reads, with or without a Content-Length', async () => {
    const { createServer } = await import('node:http')
    const { gzipSync } = await import('node:zlib')
    const body = 'x'.repeat(100_000)
    const encodings: Array<string | undefined> = []
    const server = createServer((req, res) => {
      encodings.push(req.headers['accept-encoding'])
      if (req.url === '/length') res.end(body)
      else if (req.url === '/chunked') {
        res.write(body.slice(0, 40_000))
        res.end(body.slice(40_000))
      } else if (req.url === '/gzip') {
        // A runtime that compresses anyway: the decoded bytes count.
        res.setHeader('content-encoding', 'gzip')
        res.end(gzipSync(body))
      } else {
        res.setHeader('content-type', 'text/event-stream')
        res.end('data: {}\n\n')
      }
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    // Never Node's global fetch: its client would stay loaded in the gateway's process (10 MiB).
    const globalFetch = vi.spyOn(globalThis, 'fetch')
    try {
      for (const path of ['length', 'chunked', 'gzip']) {
        const meter = { bytes: 0 }
        const text = await withReadMeter(meter, async () =>
          (await meteredFetch(`http://127.0.0.1:${port}/${path}`)).text(),
        )
        expect(text).toBe(body)
        expect(meter.bytes, path).toBe(100_000)
      }
      const meter = { bytes: 0 }
      await withReadMeter(meter, async () => (await meteredFetch(`http://127.0.0.1:${port}/events`)).text())
      expect(meter.bytes).toBe(0)
      // Outside a call nothing is counted, and the answer is untouched.
      expect(await (await meteredFetch(`http://127.0.0.1:${port}/chunked`)).text()).toBe(body)
      // A Request, as the runtime client hands over, is asked uncompressed too.
      expect(await (await meteredFetch(new Request(`http://127.0.0.1:${port}/gzip`))).text()).toBe(body)
      // The client's reads (bufferedGet) are asked uncompressed and counted the same way.
      for (const path of ['length', 'chunked', 'gzip']) {
        const meter = { bytes: 0 }
        const answer = await withReadMeter(meter, () =>
          meteredFetch.bufferedGet(
            new URL(`http://127.0.0.1:${port}/${path}`),
            {},
            new AbortController().signal,
          ),
        )
        expect(answer.body.toString()).toBe(body)
        expect(meter.bytes, `bufferedGet ${path}`).toBe(100_000)
      }
      expect(encodings).toHaveLength(9)
      expect(encodings.every((e) => e === 'identity')).toBe(true)
      expect(globalFetch).not.toHaveBeenCalled()
    } finally {
      globalFetch.mockRestore()
      server.close()
    }
  })
})

describe('gatewayUpstreamOptions', () => {
  it("the gateway's runtime client reads through meteredFetch.bufferedGet, counted, never the global fetch", async () => {
    const { createServer } = await import('node:http')
    const answer = JSON.stringify({ ses_1: { type: 'idle' } })
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json')
      res.end(answer)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    const client = createUpstreamClient({
      ...gatewayUpstreamOptions,
      baseUrl: `http://127.0.0.1:${port}`,
      password: 'pw',
      directory: '/w',
    })
    const buffered = vi.spyOn(meteredFetch, 'bufferedGet')
    const globalFetch = vi.spyOn(globalThis, 'fetch')
    try {
      const meter = { bytes: 0 }
      const statuses = await withReadMeter(meter, () => client.sessionStatus())
      expect(statuses).toEqual({ ses_1: { type: 'idle' } })
      expect(buffered).toHaveBeenCalledTimes(1)
      expect(meter.bytes).toBe(Buffer.byteLength(answer))
      expect(globalFetch).not.toHaveBeenCalled()
    } finally {
      buffered.mockRestore()
      globalFetch.mockRestore()
      client.close()
      server.close()
    }
  })
})
