import { HttpResponse, http } from 'msw'
import { describe, expect, it } from 'vitest'
import { useFakeRuntime } from './support/msw.ts'

const { fake, server, client } = useFakeRuntime()
const auth = () => ({
  authorization: `Basic ${Buffer.from(`${fake.username}:${fake.password}`).toString('base64')}`,
})

function waitingOnPermission() {
  const session = fake.addSession({ title: 'waiting' })
  fake.prompt(session.id, 'run bash')
  const ask = fake.askPermission(session.id)
  return { session, ask }
}

describe('deleteSession', () => {
  it('a bare DELETE of a session waiting on a permission leaves an orphan ask (what the fake models)', async () => {
    const { session, ask } = waitingOnPermission()
    const response = await fetch(`${fake.url(`/session/${session.id}`)}?directory=${fake.directory}`, {
      method: 'DELETE',
      headers: auth(),
    })
    expect(response.status).toBe(200)
    const c = client()
    expect((await c.listPermissions()).map((p) => p.id)).toContain(ask.id)
    expect((await c.sessionStatus())[session.id]).toEqual({ type: 'busy' })
    await c.replyPermission(ask.id, 'reject') // clean up the orphan
    expect((await c.sessionStatus())[session.id]).toBeUndefined()
  })

  it('aborts, rejects pending asks of the session, then deletes: no orphan is left', async () => {
    const c = client()
    const { session, ask } = waitingOnPermission()
    const other = waitingOnPermission()
    fake.requests.length = 0
    const result = await c.deleteSession(session.id)
    expect(result).toEqual({ sessions: [session.id], permissions: [ask.id], questions: [] })
    const calls = fake.requests.map(
      (r) => `${r.method} ${r.path.replace(session.id, ':id').replace(ask.id, ':ask')}`,
    )
    expect(calls).toEqual([
      // The abort first: it is worth most the sooner it lands.
      'POST /session/:id/abort',
      // Its descendants through their parent: never a listing of every session.
      'GET /session/:id/children',
      'GET /permission',
      'GET /question',
      'POST /permission/:ask/reply',
      'DELETE /session/:id',
    ])
    expect(await c.listPermissions(session.id)).toEqual([])
    expect((await c.sessionStatus())[session.id]).toBeUndefined()
    await expect(c.getSession(session.id)).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NOT_FOUND' })
    // Another session's ask is untouched.
    expect((await c.listPermissions()).map((p) => p.id)).toContain(other.ask.id)
  })

  it('settles questions and the asks of child sessions too', async () => {
    const c = client()
    const parent = fake.addSession({ title: 'parent' })
    fake.prompt(parent.id, 'delegate')
    const child = fake.addSession({ title: 'child', parentID: parent.id })
    fake.prompt(child.id, 'sub task')
    const question = fake.askQuestion(child.id)
    const grandchild = fake.addSession({ title: 'grandchild', parentID: child.id })
    fake.prompt(grandchild.id, 'deeper')
    const ask = fake.askPermission(grandchild.id)
    const result = await c.deleteSession(parent.id)
    expect(result).toEqual({
      sessions: [parent.id, child.id, grandchild.id],
      permissions: [ask.id],
      questions: [question.id],
    })
    expect(await c.listQuestions()).not.toContainEqual(expect.objectContaining({ id: question.id }))
    const status = await c.sessionStatus()
    for (const id of result.sessions) expect(status[id]).toBeUndefined()
  })

  it('skips an ask answered in the meantime (404) and still deletes', async () => {
    const c = client()
    const { session, ask } = waitingOnPermission()
    server.use(
      http.post(fake.url('/permission/:id/reply'), () =>
        HttpResponse.json({ name: 'PermissionNotFoundError', data: { message: 'gone' } }, { status: 404 }),
      ),
    )
    const result = await c.deleteSession(session.id)
    expect(result.permissions).toEqual([])
    expect(fake.state.sessions.has(session.id)).toBe(false)
    server.resetHandlers()
    await c.replyPermission(ask.id, 'reject')
  })

  it('does not delete when settling fails', async () => {
    const c = client()
    const { session } = waitingOnPermission()
    server.use(http.get(fake.url('/permission'), () => new HttpResponse('boom', { status: 500 })))
    await expect(c.deleteSession(session.id)).rejects.toMatchObject({
      code: 'ERR_UPSTREAM_HTTP',
      status: 500,
    })
    expect(fake.state.sessions.has(session.id)).toBe(true)
  })
})
