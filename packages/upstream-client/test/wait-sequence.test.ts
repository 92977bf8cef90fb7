import { describe, expect, it } from 'vitest'
import type { UpstreamClient } from '../src/index.ts'
import { useFakeRuntime } from './support/msw.ts'

// Event sequence numbers let many waiters of one session share one read per event (the gateway's
// turn reads): each check is told the number of the event it must reflect.

const { fake, client } = useFakeRuntime()
const fast = { initialBackoffMs: 10, maxBackoffMs: 50 }

async function connected(c: UpstreamClient): Promise<void> {
  c.events.onEvent(() => undefined)
  const deadline = Date.now() + 3_000
  while (!c.events.connected) {
    if (Date.now() > deadline) throw new Error('never connected')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe('event sequence numbers', () => {
  it('counts every dispatched event and never goes back', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    await connected(c)
    const start = c.events.sequence
    let seen = 0
    const off = c.events.onEvent(() => {
      seen++
      // A listener sees the number of the event it is handed already counted.
      expect(c.events.sequence).toBeGreaterThanOrEqual(start + seen)
    })
    fake.setTodos(session.id, [])
    fake.setTodos(session.id, [])
    while (seen < 2) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(c.events.sequence).toBeGreaterThanOrEqual(start + 2)
    off()
  })

  it('tells each waitUntil check the sequence number of the event it must reflect', async () => {
    const c = client({ events: fast })
    const session = fake.addSession()
    await connected(c)
    const wakes: number[] = []
    let stop = false
    const waiting = c.events.waitUntil(
      session.id,
      async ({ sequence }) => {
        wakes.push(sequence)
        return stop ? sequence : undefined
      },
      { timeoutMs: 3_000 },
    )
    // The first check: the number current when it ran.
    expect(wakes).toEqual([c.events.sequence])
    const before = c.events.sequence
    stop = true
    fake.setTodos(session.id, [])
    const last = await waiting
    expect(last).toBeGreaterThan(before)
    expect(last).toBeLessThanOrEqual(c.events.sequence)
  })
})
