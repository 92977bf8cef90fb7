import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type E2E, errorCode, type McpSession, startE2E } from './harness.js'

// The whole product, end to end: real MCP clients → the gateway → the real OpenCode runtime
// (pinned binary) driven by the scripted model server.

let e2e: E2E
let full: McpSession
let read: McpSession
let chat: McpSession
let chat2: McpSession

beforeAll(async () => {
  e2e = await startE2E()
  full = await e2e.connect(e2e.creds.keys.full, 'auto')
  read = await e2e.connect(e2e.creds.keys.read, 'legacy')
  chat = await e2e.connect(e2e.creds.keys.chat, 'auto')
  chat2 = await e2e.connect(e2e.creds.keys.chat2, 'v1')
}, 90_000)

afterAll(async () => {
  for (const c of [full, read, chat, chat2]) await c?.close().catch(() => undefined)
  await e2e?.stop()
})

const CHAT_TOOLS = [
  'gateway.agent.run',
  'gateway.catalog.get',
  'gateway.interaction.respond',
  'gateway.job.cancel',
  'gateway.job.get',
  'gateway.session.get',
  'gateway.session.list',
]
const READ_TOOLS = [...CHAT_TOOLS, 'gateway.workspace.read', 'gateway.workspace.search'].sort()
const FULL_TOOLS = [...READ_TOOLS, 'gateway.session.delete', 'gateway.session.fork'].sort()

describe('protocol eras and catalogs', () => {
  it('negotiates 2026-07-28 in auto mode and a 2025 revision in legacy and v1 clients', () => {
    expect(full.protocolVersion()).toBe('2026-07-28')
    expect(read.protocolVersion()).toMatch(/^2025-/)
    expect(chat2.protocolVersion() ?? '2025').toMatch(/^2025/)
  })

  it('shows chat 7, read 9 and full 11 tools', async () => {
    expect(await chat.listTools()).toEqual(CHAT_TOOLS)
    expect(await chat2.listTools()).toEqual(CHAT_TOOLS)
    expect(await read.listTools()).toEqual(READ_TOOLS)
    expect(await full.listTools()).toEqual(FULL_TOOLS)
  })

  it('gateway.catalog.get agrees with tools/list and names the principal', async () => {
    const out = await read.call('gateway.catalog.get')
    expect(out.isError).toBe(false)
    expect(out.structured).toMatchObject({ service: 'sallyport', policy: 'read', principal: 'reader' })
    expect([...(out.structured.tools as string[])].sort()).toEqual(READ_TOOLS)
    expect(JSON.stringify(out.structured)).not.toMatch(/provider|apiKey|fake-key|bash/)
  })

  it('treats a hidden tool exactly like an unknown tool', async () => {
    const hidden = await chat
      .call('gateway.workspace.read', { path: 'README.md' })
      .catch((e: Error) => ({ thrown: e.message }))
    const unknown = await chat
      .call('gateway.nope', { path: 'README.md' })
      .catch((e: Error) => ({ thrown: e.message }))
    const norm = (v: unknown) =>
      JSON.stringify(v).replaceAll('gateway.workspace.read', 'X').replaceAll('gateway.nope', 'X')
    expect(norm(hidden)).toEqual(norm(unknown))
  })

  it('lists the four prompts and workspace resources only for read and full', async () => {
    expect(await chat.listPrompts()).toEqual([
      'gateway.debug',
      'gateway.explain',
      'gateway.implement',
      'gateway.review',
    ])
    expect(await chat.listResourceTemplates()).not.toContain('gateway://workspace/{+path}')
    expect(await read.listResourceTemplates()).toContain('gateway://workspace/{+path}')
    const text = await chat.getPrompt('gateway.debug', { task: 'the build fails' })
    expect(text).toContain('gateway.agent.run')
    expect(text).toContain('the build fails')
  })
})

describe('the whole workflow (full credential)', () => {
  it('runs, asks permission, is approved once, completes, and shows its session views', async () => {
    const marker = e2e.stack.model.script([
      {
        toolCall: {
          name: 'bash',
          input: { command: 'echo gateway-e2e > out.txt && cat out.txt', description: 'write a file' },
        },
      },
      {
        toolCall: {
          name: 'todowrite',
          input: { todos: [{ content: 'check output', status: 'completed', priority: 'high' }] },
        },
      },
      (req) => ({ text: `done: ${req.toolResults.join('').trim().slice(0, 40)}` }),
    ])
    const run = await full.call('gateway.agent.run', {
      message: `please run it ${marker}`,
      title: 'E2E workflow',
      waitMs: 15_000,
    })
    expect(run.isError ? run.text : 'ok').toBe('ok')
    expect(run.structured.status).toBe('input_required')
    const [ask] = run.structured.interactions as Array<Record<string, unknown>>
    expect(ask).toMatchObject({
      kind: 'permission',
      permission: 'bash',
      allowedDecisions: ['once', 'always', 'reject'],
    })

    const respond = await full.call('gateway.interaction.respond', {
      interaction: ask?.interaction,
      decision: 'once',
    })
    expect(respond.structured).toEqual({ accepted: true, kind: 'permission' })

    const done = await full.call('gateway.job.get', { job: run.structured.job, waitMs: 20_000 })
    expect(done.structured.status).toBe('completed')
    expect(done.structured.text).toMatch(/^done:/)
    expect(done.structured.usage).toMatchObject({ input: expect.any(Number), output: expect.any(Number) })
    expect(done.structured.todos).toEqual([
      { content: 'check output', status: 'completed', priority: 'high' },
    ])

    // Answering the same interaction again is refused: it is no longer pending.
    const again = await full.call('gateway.interaction.respond', {
      interaction: ask?.interaction,
      decision: 'once',
    })
    expect(errorCode(again)).toBe('not_pending')

    const view = await full.call('gateway.session.get', {
      session: run.structured.session,
      include: ['messages', 'diff', 'todos'],
    })
    expect(view.isError).toBe(false)
    expect(view.structured.session).toMatchObject({ title: 'E2E workflow', status: 'idle' })
    const messages = view.structured.messages as Array<{ role: string; text: string }>
    expect(messages[0]).toMatchObject({ role: 'user' })
    expect(messages.at(-1)?.text).toMatch(/^done:/)
    expect(view.structured.todos).toHaveLength(1)

    const resource = await full.readResource(`gateway://jobs/${run.structured.job}`)
    expect('text' in resource && JSON.parse(resource.text).status).toBe('completed')
    const msgs = await full.readResource(`gateway://sessions/${run.structured.session}/messages`)
    expect('text' in msgs && JSON.parse(msgs.text).messages.length).toBeGreaterThan(1)

    // Fork, then delete the fork and the original.
    const fork = await full.call('gateway.session.fork', { session: run.structured.session })
    expect(fork.isError).toBe(false)
    const forkHandle = (fork.structured.session as { session: string }).session
    const forkView = await full.call('gateway.session.get', { session: forkHandle, include: ['messages'] })
    expect((forkView.structured.messages as unknown[]).length).toBe(messages.length)
    const list = await full.call('gateway.session.list', { limit: 100 })
    const titles = (list.structured.sessions as Array<{ title: string }>).map((s) => s.title)
    expect(titles).toContain('E2E workflow')
    expect(titles.some((t) => t.includes('fork'))).toBe(true)

    expect((await full.call('gateway.session.delete', { session: forkHandle })).structured).toEqual({
      deleted: true,
    })
    expect(errorCode(await full.call('gateway.session.get', { session: forkHandle }))).toBe('not_found')
  })

  it('answers a question and completes', async () => {
    const marker = e2e.stack.model.script([
      {
        toolCall: {
          name: 'question',
          input: {
            questions: [
              {
                question: 'Which colour?',
                header: 'Colour',
                options: [
                  { label: 'Blue', description: 'cool' },
                  { label: 'Red', description: 'warm' },
                ],
              },
            ],
          },
        },
      },
      (req) => ({ text: `answer was ${req.toolResults.join(' ').includes('Blue') ? 'Blue' : 'other'}` }),
    ])
    const run = await chat.call('gateway.agent.run', { message: `ask me ${marker}`, waitMs: 15_000 })
    expect(run.structured.status).toBe('input_required')
    const [q] = run.structured.interactions as Array<{
      kind: string
      interaction: string
      questions: Array<{ question: string }>
    }>
    expect(q?.kind).toBe('question')
    expect(q?.questions[0]?.question).toBe('Which colour?')
    const wrongShape = await chat.call('gateway.interaction.respond', {
      interaction: q?.interaction,
      answers: [['Blue'], ['Red']],
    })
    expect(errorCode(wrongShape)).toBe('invalid_input')
    const ok = await chat.call('gateway.interaction.respond', {
      interaction: q?.interaction,
      answers: [['Blue']],
    })
    expect(ok.structured).toEqual({ accepted: true, kind: 'question' })
    const done = await chat.call('gateway.job.get', { job: run.structured.job, waitMs: 20_000 })
    expect(done.structured).toMatchObject({ status: 'completed', text: 'answer was Blue' })
  })

  it('reports a failed run with the runtime error', async () => {
    const marker = e2e.stack.model.script([{ error: { status: 400, message: 'scripted failure' } }])
    const run = await chat.call('gateway.agent.run', { message: `fail please ${marker}`, waitMs: 15_000 })
    expect(run.structured.status).toBe('failed')
    expect(run.structured.error).toMatchObject({ name: 'APIError' })
  })
})

describe('jobs and cancellation', () => {
  it('cancels a running job, and an old job handle never cancels a later run', async () => {
    const fast = e2e.stack.model.script([{ text: 'first run done' }])
    const first = await chat.call('gateway.agent.run', { message: `one ${fast}`, waitMs: 15_000 })
    expect(first.structured.status).toBe('completed')

    const slow = e2e.stack.model.script([
      { text: ['a', 'b', 'c', 'd', 'e', 'f'], delayMs: 200, intervalMs: 2_000 },
    ])
    const second = await chat.call('gateway.agent.run', {
      message: `two ${slow}`,
      session: first.structured.session,
      waitMs: 500,
    })
    expect(second.structured.status).toBe('running')

    // A third run on the busy session is refused instead of being queued.
    const third = await chat.call('gateway.agent.run', {
      message: 'three',
      session: first.structured.session,
    })
    expect(errorCode(third)).toBe('busy')

    const stale = await chat.call('gateway.job.cancel', { job: first.structured.job })
    expect(errorCode(stale)).toBe('not_pending')
    expect((await chat.call('gateway.job.get', { job: second.structured.job })).structured.status).toBe(
      'running',
    )

    const cancel = await chat.call('gateway.job.cancel', { job: second.structured.job })
    expect(cancel.structured.status).toBe('cancelled')
    const after = await chat.call('gateway.job.get', { job: second.structured.job, waitMs: 10_000 })
    expect(after.structured.status).toBe('cancelled')
    // The older job stays deterministic.
    const old = await chat.call('gateway.job.get', { job: first.structured.job })
    expect(old.structured).toMatchObject({ status: 'completed', text: 'first run done' })
  })
})

describe('isolation between credentials', () => {
  it('credential B cannot see, poll, cancel, read or answer anything of credential A', async () => {
    const marker = e2e.stack.model.script([
      {
        toolCall: {
          name: 'question',
          input: {
            questions: [{ question: 'Secret?', header: 'S', options: [{ label: 'Yes', description: 'y' }] }],
          },
        },
      },
      { text: 'A done' },
    ])
    const a = await chat.call('gateway.agent.run', {
      message: `private ${marker}`,
      title: 'A private',
      waitMs: 15_000,
    })
    expect(a.structured.status).toBe('input_required')
    const interaction = (a.structured.interactions as Array<{ interaction: string }>)[0]?.interaction
    const attempts = [
      await chat2.call('gateway.job.get', { job: a.structured.job }),
      await chat2.call('gateway.job.cancel', { job: a.structured.job }),
      await chat2.call('gateway.session.get', { session: a.structured.session, include: ['messages'] }),
      await chat2.call('gateway.agent.run', { message: 'hijack', session: a.structured.session }),
      await chat2.call('gateway.interaction.respond', { interaction, answers: [['Yes']] }),
      await full.call('gateway.session.delete', { session: a.structured.session }),
      await full.call('gateway.session.fork', { session: a.structured.session }),
    ]
    for (const attempt of attempts) {
      expect(attempt.isError).toBe(true)
      expect(errorCode(attempt)).toBe('not_found')
    }
    const list = await chat2.call('gateway.session.list', { limit: 100 })
    expect((list.structured.sessions as Array<{ title: string }>).map((s) => s.title)).not.toContain(
      'A private',
    )
    const resource = await chat2.readResource(`gateway://sessions/${a.structured.session}/messages`)
    expect('error' in resource).toBe(true)
    // A still owns it and can finish it.
    await chat.call('gateway.interaction.respond', { interaction, answers: [['Yes']] })
    expect(
      (await chat.call('gateway.job.get', { job: a.structured.job, waitMs: 15_000 })).structured.status,
    ).toBe('completed')
  })

  it('refuses raw upstream ids as handles', async () => {
    const sessions = await e2e.upstream.listSessions()
    const raw = sessions[0]?.id as string
    expect(raw).toMatch(/^ses/)
    for (const out of [
      await full.call('gateway.session.get', { session: raw }),
      await full.call('gateway.job.get', { job: raw }),
      await full.call('gateway.agent.run', { message: 'x', session: raw }),
    ]) {
      expect(out.isError).toBe(true)
      expect(['handle_invalid', 'not_found']).toContain(errorCode(out))
    }
  })

  it('refuses a session whose ownership record was copied from another session', async () => {
    const marker = e2e.stack.model.script([{ text: 'owned' }])
    const run = await full.call('gateway.agent.run', { message: `own ${marker}`, waitMs: 15_000 })
    const mine = (await e2e.upstream.listSessions()).find((s) => s.metadata && 'sallyport' in s.metadata)
    const victim = await e2e.upstream.createSession({ title: 'not created by the gateway' })
    await e2e.upstream.updateSessionMetadata(victim.id, { ...(mine?.metadata ?? {}) })
    const list = await full.call('gateway.session.list', { limit: 100 })
    expect((list.structured.sessions as Array<{ title: string }>).map((s) => s.title)).not.toContain(
      'not created by the gateway',
    )
    expect(run.structured.status).toBe('completed')
  })
})

describe('handles expire', () => {
  it('refuses a job handle after its lifetime with handle_expired', async () => {
    const marker = e2e.stack.model.script([{ text: 'soon expired' }])
    const run = await full.call('gateway.agent.run', { message: `expire ${marker}`, waitMs: 15_000 })
    const later = await e2e.extraGateway({ now: () => Date.now() + 25 * 3600_000 })
    const { connectTo } = await import('./harness.js')
    const client = await connectTo(e2e, later.url, e2e.creds.keys.full)
    const job = await client.call('gateway.job.get', { job: run.structured.job })
    expect(errorCode(job)).toBe('handle_expired')
    // The session handle (30 days) is still valid a day later.
    const session = await client.call('gateway.session.get', { session: run.structured.session })
    expect(session.isError).toBe(false)
    await client.close()
  })
})

describe('workspace tools', () => {
  it('reads and searches the workspace for read credentials, never secrets', async () => {
    await writeFile(
      join(e2e.stack.runtime.directory, 'notes.md'),
      'hello from the workspace\nneedle-e2e here\n',
    )
    await writeFile(join(e2e.stack.runtime.directory, '.env'), 'TOKEN=needle-e2e-secret\n')
    const file = await read.call('gateway.workspace.read', { path: 'notes.md' })
    expect(file.structured).toMatchObject({ path: 'notes.md', text: expect.stringContaining('needle-e2e') })
    expect(errorCode(await read.call('gateway.workspace.read', { path: '.env' }))).toBe('path_denied')
    expect(errorCode(await read.call('gateway.workspace.read', { path: '../../etc/passwd' }))).toBe(
      'path_denied',
    )
    const search = await read.call('gateway.workspace.search', { mode: 'text', query: 'needle-e2e' })
    const paths = (search.structured.matches as Array<{ path: string }>).map((m) => m.path)
    expect(paths).toContain('notes.md')
    expect(paths).not.toContain('.env')
    const resource = await read.readResource('gateway://workspace/notes.md')
    expect('text' in resource && resource.text).toContain('hello from the workspace')
  })
})

describe('agent profiles in the real runtime', () => {
  it('the agent of a read credential reads ordinary files but never a secret file', async () => {
    const dir = e2e.stack.runtime.directory
    await writeFile(join(dir, 'plain.txt'), 'plain-content-4711\n')
    await writeFile(join(dir, '.env'), 'API_TOKEN=secret-content-0815\n')
    await writeFile(
      join(dir, 'server.pem'),
      '-----BEGIN PRIVATE KEY-----\nsecret-pem-0815\n-----END PRIVATE KEY-----\n',
    )
    const results: string[] = []
    const marker = e2e.stack.model.script([
      { toolCall: { name: 'read', input: { filePath: join(dir, 'plain.txt') } } },
      (req) => {
        results.push(req.toolResults.join(''))
        return { toolCall: { name: 'read', input: { filePath: join(dir, '.env') } } }
      },
      (req) => {
        results.push(req.toolResults.join(''))
        return { toolCall: { name: 'read', input: { filePath: join(dir, 'server.pem') } } }
      },
      (req) => {
        results.push(req.toolResults.join(''))
        return { text: 'read attempts done' }
      },
    ])
    const run = await read.call('gateway.agent.run', { message: `read files ${marker}`, waitMs: 20_000 })
    expect(run.structured).toMatchObject({ status: 'completed', text: 'read attempts done' })
    expect(results).toHaveLength(3)
    expect(results[0]).toContain('plain-content-4711')
    expect(results[1]).not.toContain('secret-content-0815')
    expect(results[2]).not.toContain('secret-pem-0815')
  })

  it('the agent of a read credential cannot find secret file contents by searching', async () => {
    const dir = e2e.stack.runtime.directory
    await writeFile(join(dir, '.env'), 'API_TOKEN=secret-content-0815\n')
    await writeFile(join(dir, 'visible.txt'), 'findme-content-0815\n')
    const results: string[] = []
    const marker = e2e.stack.model.script([
      { toolCall: { name: 'grep', input: { pattern: 'content-0815' } } },
      (req) => {
        results.push(req.toolResults.join(''))
        return { toolCall: { name: 'glob', input: { pattern: '**/*.env*' } } }
      },
      (req) => {
        results.push(req.toolResults.join(''))
        return { text: 'search attempts done' }
      },
    ])
    const run = await read.call('gateway.agent.run', { message: `search files ${marker}`, waitMs: 20_000 })
    expect(run.structured).toMatchObject({ status: 'completed', text: 'search attempts done' })
    expect(results).toHaveLength(2)
    expect(results.join('\n')).not.toContain('secret-content-0815')
    expect(results.join('\n')).not.toContain('/.env')
  })
})

describe('concealment', () => {
  it('logs one audit line per tool call and never a key, handle, message text or upstream id', () => {
    const text = e2e.logs()
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const calls = lines.filter((l) => l.event === 'audit' && l.rpcMethod === 'tools/call')
    expect(calls.length).toBeGreaterThan(20)
    for (const line of calls) {
      expect(line).toMatchObject({
        username: expect.any(String),
        tool: expect.stringMatching(/^(gateway\.[a-z.]+|unknown)$/),
        outcome: expect.stringMatching(/^(ok|error|refused)$/),
      })
      expect(typeof line.durationMs).toBe('number')
    }
    // The unknown tool of the hidden-tool test was refused before any tool ran, and its name,
    // not one of the gateway's, is not recorded.
    expect(calls.find((l) => l.tool === 'unknown')).toMatchObject({
      outcome: 'refused',
      errorCode: 'unknown_tool',
    })
    expect(text).not.toContain('gateway.nope')
    for (const key of Object.values(e2e.creds.keys)) expect(text).not.toContain(key)
    expect(text).not.toMatch(/v1\.[A-Za-z0-9_-]{40,}/)
    expect(text).not.toMatch(/(ses|msg|per|que)_[0-9A-Za-z]{20,}/)
    expect(text).not.toContain('please run it')
  })

  it('never returns an upstream id in any response body', () => {
    expect(e2e.bodies.length).toBeGreaterThan(20)
    for (const body of e2e.bodies) {
      // Handles are random base64url and may contain any 4 characters by chance: take them out first.
      const withoutHandles = body.replace(/v1\.[A-Za-z0-9_-]{20,}/g, '<handle>')
      expect(withoutHandles).not.toMatch(/(ses|msg|per|que)_?[0-9A-Za-z]{20,}/)
    }
  })
})
