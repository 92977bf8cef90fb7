import { describe, expect, it } from 'vitest'
import { createUpstreamClient } from './client.ts'

// The client's bound on requests in flight to the runtime, through its real transport: however
// many callers, at most `maxConcurrentRequests` requests are sent at once.

describe('maxConcurrentRequests', () => {
  it('sends at most the bound at once, and every call is answered', async () => {
    let inFlight = 0
    let most = 0
    const fetch: typeof globalThis.fetch = async () => {
      inFlight++
      most = Math.max(most, inFlight)
      await new Promise((resolve) => setTimeout(resolve, 5))
      inFlight--
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } })
    }
    const client = createUpstreamClient({
      baseUrl: 'http://127.0.0.1:9',
      password: 'pw',
      directory: '/work',
      fetch,
      maxConcurrentRequests: 3,
    })
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, () => client.sessionStatus()))
      expect(answers).toHaveLength(40)
      expect(most).toBe(3)
    } finally {
      client.close()
    }
  })
})
