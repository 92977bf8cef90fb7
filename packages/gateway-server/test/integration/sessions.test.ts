import { describe, expect, it } from 'vitest'
import {
  COMPLETE_DIFFS,
  COMPLETE_TODOS,
  completeText,
  expectNoLeaks,
  MARK,
  POLICIES,
  tamper,
  useHarness,
  WHO,
  type Who,
} from './harness.js'
import {
  expectShape,
  JobStatusShape,
  SessionDeleteShape,
  SessionForkShape,
  SessionGetShape,
  SessionListShape,
} from './shapes.js'

// gateway.session.get (all policies), gateway.session.fork and gateway.session.delete (full).

const h = useHarness()

async function run(who: Who, args: Record<string, unknown>) {
  return expectShape(JobStatusShape, await h.clients[who].ok('gateway.agent.run', args))
}
async function get(who: Who, args: Record<string, unknown>) {
  return expectShape(SessionGetShape, await h.clients[who].ok('gateway.session.get', args))
}
/** A session with two completed turns (4 messages). */
async function twoTurns(who: Who, title: string) {
  const first = await run(who, { message: `turn one ${MARK.complete}`, title, waitMs: 5_000 })
  await run(who, { message: `turn two ${MARK.complete}`, session: first.session, waitMs: 5_000 })
  return { session: first.session, sid: await h.sessionId(who, first.session) }
}
const mutations = (mark: number) => h.requestsSince(mark).filter((r) => r.method !== 'GET')

describe('gateway.session.get', () => {
  it.each(POLICIES)(
    '%s: returns only the summary (and the running job) when nothing is included',
    async (policy) => {
      const who = WHO[policy]
      const status = await run(who, { message: 'summary only', title: `get ${policy}`, waitMs: 0 })
      const out = await h.clients[who].call('gateway.session.get', { session: status.session })
      expect(out.kind === 'result' && !out.isError).toBe(true)
      if (out.kind !== 'result') return
      const view = expectShape(SessionGetShape, out.structured)
      expect(Object.keys(view)).toEqual(['session', 'activeJob'])
      expect(view.session).toMatchObject({ title: `get ${policy}`, status: 'busy' })
      // The running job is the one agent.run started (its handle sealed anew).
      expect((await h.open('job', who, String(view.activeJob))).m).toBe(
        (await h.open('job', who, status.job)).m,
      )
      expect(await h.sessionId(who, view.session.session)).toBe(await h.sessionId(who, status.session))
      expect(JSON.parse(out.text)).toEqual(view)
    },
  )

  it.each(POLICIES)('%s: includes messages, diff and todos', async (policy) => {
    const who = WHO[policy]
    const { session, sid } = await twoTurns(who, `views ${policy}`)
    const view = await get(who, { session, include: ['messages', 'diff', 'todos'] })
    expect(view.session.status).toBe('idle')
    expect(view.messages?.map((m) => [m.role, m.text])).toEqual([
      ['user', `turn one ${MARK.complete}`],
      ['assistant', completeText(`turn one ${MARK.complete}`)],
      ['user', `turn two ${MARK.complete}`],
      ['assistant', completeText(`turn two ${MARK.complete}`)],
    ])
    const upstream = (h.fake.state.messages.get(sid) ?? []).map((m) => m.info.id)
    const opened = await Promise.all(view.messages?.map((m) => h.open('message', who, m.message)) ?? [])
    expect(opened.map((p) => p.m)).toEqual(upstream)
    expect(opened.every((p) => p.s === sid)).toBe(true)
    // Both turns changed the same file: the session diff merges them by path.
    expect(view.diff).toEqual([
      {
        ...COMPLETE_DIFFS[0],
        additions: 2 * (COMPLETE_DIFFS[0]?.additions ?? 0),
        deletions: 2 * (COMPLETE_DIFFS[0]?.deletions ?? 0),
        patch: '@@ -1 +1 @@',
      },
    ])
    expect(view.todos).toEqual(COMPLETE_TODOS)
  })

  it('includes only the views asked for', async () => {
    const { session } = await twoTurns('read', 'some views')
    const view = await get('read', { session, include: ['todos'] })
    expect(Object.keys(view).sort()).toEqual(['session', 'todos'])
    const none = await get('read', { session, include: [] })
    expect(Object.keys(none)).toEqual(['session'])
  })

  it('shows tool calls and errors of messages', async () => {
    const asked = await run('full', { message: `tooling ${MARK.question}`, waitMs: 5_000 })
    const view = await get('full', { session: asked.session, include: ['messages'] })
    expect(view.messages?.at(-1)?.tools).toEqual([{ tool: 'question', status: 'running' }])
    const failed = await run('full', { message: `broken ${MARK.fail}`, waitMs: 5_000 })
    const broken = await get('full', { session: failed.session, include: ['messages'] })
    expect(broken.messages?.at(-1)?.error).toEqual({
      name: 'APIError',
      message: 'The model rejected the request',
    })
  })

  it.each(['chat2', 'read', 'full'] as const)(
    'answers %s asking for chat’s session with not_found',
    async (who) => {
      const status = await run('chat', { message: 'mine', waitMs: 0 })
      expect(await h.clients[who].errorCode('gateway.session.get', { session: status.session })).toBe(
        'not_found',
      )
    },
  )
})

describe('gateway.session.fork', () => {
  it('copies a session into a new one and signs it afresh (the copied record would fail)', async () => {
    const { session, sid } = await twoTurns('full', 'forkable')
    const mark = h.fake.requests.length
    const out = await h.clients.full.call('gateway.session.fork', { session })
    expect(out.kind === 'result' && !out.isError).toBe(true)
    if (out.kind !== 'result') return
    const fork = expectShape(SessionForkShape, out.structured).session
    expect(JSON.parse(out.text)).toEqual(out.structured)
    expect(fork).toMatchObject({ title: 'forkable (fork #1)', status: 'idle' })
    const forkId = await h.sessionId('full', fork.session)
    expect(forkId).not.toBe(sid)
    expect(mutations(mark).map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /session/${sid}/fork`,
      `PATCH /session/${forkId}`,
    ])
    const parentRecord = h.fake.state.sessions.get(sid)?.metadata?.sallyport
    const forkRecord = h.fake.state.sessions.get(forkId)?.metadata?.sallyport
    expect(await h.verifyOwner(forkId, 'full', parentRecord)).toBe(false)
    expect(await h.verifyOwner(forkId, 'full', forkRecord)).toBe(true)
    expect(forkRecord).not.toEqual(parentRecord)
    const view = await get('full', { session: fork.session, include: ['messages'] })
    expect(view.messages).toHaveLength(4)
    const listed = expectShape(SessionListShape, await h.clients.full.ok('gateway.session.list', {}))
    const listedIds = await Promise.all(listed.sessions.map((s) => h.sessionId('full', s.session)))
    expect(listedIds).toContain(forkId)
    expect(listedIds).toContain(sid)
  })

  it('forks before a message given by its message handle', async () => {
    const { session } = await twoTurns('full', 'fork point')
    const view = await get('full', { session, include: ['messages'] })
    const secondUser = view.messages?.[2]
    expect(secondUser?.role).toBe('user')
    const fork = expectShape(
      SessionForkShape,
      await h.clients.full.ok('gateway.session.fork', { session, message: secondUser?.message }),
    ).session
    const forked = await get('full', { session: fork.session, include: ['messages'] })
    expect(forked.messages?.map((m) => m.text)).toEqual([
      `turn one ${MARK.complete}`,
      completeText(`turn one ${MARK.complete}`),
    ])
  })

  it('lets a fork be resumed with agent.run like any owned session', async () => {
    const { session } = await twoTurns('full', 'resumable fork')
    const fork = expectShape(
      SessionForkShape,
      await h.clients.full.ok('gateway.session.fork', { session }),
    ).session
    const status = await run('full', {
      message: `on the fork ${MARK.complete}`,
      session: fork.session,
      waitMs: 5_000,
    })
    expect(status.status).toBe('completed')
  })

  it('refuses a message handle of another session, of another credential or tampered, and forks nothing', async () => {
    const a = await twoTurns('full', 'fork a')
    const b = await twoTurns('full', 'fork b')
    const bMessage =
      (await get('full', { session: b.session, include: ['messages'] })).messages?.[0]?.message ?? ''
    const aMessage =
      (await get('full', { session: a.session, include: ['messages'] })).messages?.[0]?.message ?? ''
    const theirs = await twoTurns('chat', 'not yours')
    const theirMessage =
      (await get('chat', { session: theirs.session, include: ['messages'] })).messages?.[0]?.message ?? ''
    const mark = h.fake.requests.length
    for (const message of [bMessage, theirMessage, tamper(aMessage), a.session]) {
      expect(await h.clients.full.errorCode('gateway.session.fork', { session: a.session, message })).toBe(
        'not_found',
      )
    }
    expect(
      await h.clients.full.errorCode('gateway.session.fork', { session: a.session, message: 'msg_01' }),
    ).toBe('handle_invalid')
    expect(mutations(mark)).toEqual([])
  })

  it('refuses to fork another credential’s session with not_found', async () => {
    const status = await run('chat', { message: 'someone else', waitMs: 0 })
    const mark = h.fake.requests.length
    expect(await h.clients.full.errorCode('gateway.session.fork', { session: status.session })).toBe(
      'not_found',
    )
    expect(mutations(mark)).toEqual([])
  })
})

describe('gateway.session.delete', () => {
  it('settles a session waiting on a permission, then deletes it: no orphan ask is left', async () => {
    const status = await run('full', { message: `pending ask ${MARK.permission}`, waitMs: 5_000 })
    const sid = await h.sessionId('full', status.session)
    const ask = [...h.fake.state.permissions.values()].find((p) => p.sessionID === sid)
    expect(ask).toBeDefined()
    const mark = h.fake.requests.length
    const out = await h.clients.full.call('gateway.session.delete', { session: status.session })
    expect(out.kind === 'result' && !out.isError).toBe(true)
    if (out.kind !== 'result') return
    expect(expectShape(SessionDeleteShape, out.structured)).toEqual({ deleted: true })
    expect(JSON.parse(out.text)).toEqual({ deleted: true })
    expect(mutations(mark).map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /session/${sid}/abort`,
      `POST /permission/${ask?.id}/reply`,
      `DELETE /session/${sid}`,
    ])
    expect(h.fake.state.sessions.has(sid)).toBe(false)
    expect(h.fake.state.permissions.has(ask?.id ?? '')).toBe(false)
    expect(h.fake.state.status.has(sid)).toBe(false)
  })

  it('makes the session and its jobs unreachable afterwards', async () => {
    const status = await run('full', { message: `short ${MARK.complete}`, waitMs: 5_000 })
    const sid = await h.sessionId('full', status.session)
    await h.clients.full.ok('gateway.session.delete', { session: status.session })
    expect(h.fake.state.sessions.has(sid)).toBe(false)
    expect(await h.clients.full.errorCode('gateway.session.get', { session: status.session })).toBe(
      'not_found',
    )
    expect(await h.clients.full.errorCode('gateway.job.get', { job: status.job })).toBe('not_found')
    expect(await h.clients.full.errorCode('gateway.job.cancel', { job: status.job })).toBe('not_found')
    expect(await h.clients.full.errorCode('gateway.session.delete', { session: status.session })).toBe(
      'not_found',
    )
    expect(
      await h.clients.full.errorCode('gateway.agent.run', { message: 'again', session: status.session }),
    ).toBe('not_found')
    const listed = expectShape(
      SessionListShape,
      await h.clients.full.ok('gateway.session.list', { limit: 100 }),
    )
    const listedIds = await Promise.all(listed.sessions.map((s) => h.sessionId('full', s.session)))
    expect(listedIds).not.toContain(sid)
  })

  it('refuses to delete another credential’s session with not_found and deletes nothing', async () => {
    const status = await run('chat2', { message: 'keep me', waitMs: 0 })
    const sid = await h.sessionId('chat2', status.session)
    const mark = h.fake.requests.length
    expect(await h.clients.full.errorCode('gateway.session.delete', { session: status.session })).toBe(
      'not_found',
    )
    expect(mutations(mark)).toEqual([])
    expect(h.fake.state.sessions.has(sid)).toBe(true)
  })
})

describe('leaks', () => {
  it('never sent an upstream id or the runtime credential in any response or log line', () => {
    expectNoLeaks(h)
  })
})

describe('a running job is recoverable from its session (its handle was lost)', () => {
  it('session.get gives the active job while the session runs one; it follows and cancels that run', async () => {
    const run = await h.clients.chat.ok('gateway.agent.run', { message: 'runs on', waitMs: 0 })
    const got = await h.clients.chat.ok('gateway.session.get', { session: run.session })
    expect(typeof got.activeJob).toBe('string')
    expect((await h.clients.chat.ok('gateway.job.get', { job: got.activeJob })).status).toBe('running')
    expect((await h.clients.chat.ok('gateway.job.cancel', { job: got.activeJob })).status).toBe('cancelled')
    expect((await h.clients.chat.ok('gateway.job.get', { job: run.job })).status).toBe('cancelled')
    await expect
      .poll(async () => (await h.clients.chat.ok('gateway.session.get', { session: run.session })).activeJob)
      .toBeUndefined()
    // Another credential learns nothing of it.
    const other = await h.clients.chat2.call('gateway.session.get', { session: run.session })
    expect(other).toMatchObject({ isError: true, error: { code: 'not_found' } })
  })
})
