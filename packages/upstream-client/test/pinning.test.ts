import { describe, expect, it } from 'vitest'
import { useFakeRuntime } from './support/msw.ts'

const directory = '/srv/work space/ü'
const { fake, client } = useFakeRuntime({ directory })

describe('directory pinning against the fake runtime', () => {
  it('sends the configured directory on every request of a whole flow, the event stream included', async () => {
    const c = client()
    fake.requests.length = 0
    const session = await c.createSession({ title: 'pinned' })
    const off = c.events.onSession(session.id, () => undefined)
    const messageID = c.newMessageId()
    await c.promptAsync(session.id, { messageID, parts: [{ type: 'text', text: 'hi' }] })
    fake.completeTurn(session.id, 'ok')
    await c.listMessages(session.id)
    await c.sessionStatus()
    await c.listPermissions()
    await c.events.waitUntil(session.id, async () => (c.events.connected ? true : undefined), {
      timeoutMs: 2_000,
    })
    off()
    expect(fake.requests.length).toBeGreaterThan(5)
    expect(fake.requests.map((r) => r.path)).toContain('/event')
    for (const request of fake.requests) {
      expect(request.query.directory).toBe(directory)
      expect(request.authorized).toBe(true)
    }
  })

  it('the fake refuses a request for another directory, so an unpinned client fails its tests', async () => {
    const response = await fetch(`${fake.url('/session')}?directory=/etc`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${fake.username}:${fake.password}`).toString('base64')}`,
      },
    })
    expect(response.status).toBe(400)
  })

  it('offers no way to name another directory per call', async () => {
    const c = client()
    // The client's methods take no directory; an extra property is ignored, not forwarded.
    const session = await c.createSession({ title: 't', directory: '/etc' } as never)
    expect(session.directory).toBe(directory)
    expect(c.directory).toBe(directory)
  })
})
