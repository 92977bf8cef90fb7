import { describe, expect, it } from 'vitest'
import { useRuntime } from './support.ts'

// The real runtime's `GET /session/{id}/children`: what `deleteSession` finds descendants with
// (instead of listing every session), so a deleted session takes its subagent sessions along.

const e2e = useRuntime('children')

/** A session created with a parent, as the runtime's subagent tool does. */
async function childOf(parentID: string, title: string): Promise<string> {
  const { runtime } = e2e.stack
  const response = await fetch(`${runtime.url}/session?directory=${encodeURIComponent(runtime.directory)}`, {
    method: 'POST',
    headers: { authorization: runtime.authHeader, 'content-type': 'application/json' },
    body: JSON.stringify({ parentID, title }),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { id: string }).id
}

describe('session children (real runtime)', () => {
  it('lists the sessions created with a parent, not forks, and deleting the parent takes them along', async () => {
    const { client } = e2e
    const parent = await client.createSession({ title: 'parent' })
    const child = await childOf(parent.id, 'child')
    const grandchild = await childOf(child, 'grandchild')
    const fork = await client.forkSession(parent.id)
    expect((await client.listChildren(parent.id)).map((s) => s.id)).toEqual([child])
    expect((await client.listChildren(child)).map((s) => s.id)).toEqual([grandchild])
    const result = await client.deleteSession(parent.id)
    expect(result.sessions).toEqual([parent.id, child, grandchild])
    for (const id of [parent.id, child, grandchild])
      await expect(client.getSession(id)).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NOT_FOUND' })
    // A fork is a session of its own: it stays.
    expect((await client.getSession(fork.id)).id).toBe(fork.id)
  })
})
