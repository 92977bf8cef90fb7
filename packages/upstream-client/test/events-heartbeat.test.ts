import { describe, expect, it } from 'vitest'
import { useFakeRuntime } from './support/msw.ts'

// A fake whose heartbeat is much faster than the client's watchdog.
const { fake, client } = useFakeRuntime({ heartbeatMs: 40 })

describe('heartbeat watchdog', () => {
  it('does not reconnect while heartbeats keep arriving', async () => {
    const c = client({ events: { heartbeatTimeoutMs: 200, initialBackoffMs: 10, maxBackoffMs: 50 } })
    c.events.onEvent(() => undefined)
    const deadline = Date.now() + 3_000
    while (!c.events.connected && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5))
    expect(c.events.connected).toBe(true)
    const opened = fake.eventStreams.opened
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect(fake.eventStreams.opened).toBe(opened)
    expect(c.events.connected).toBe(true)
    expect(c.events.lastError).toBeUndefined()
  })
})
