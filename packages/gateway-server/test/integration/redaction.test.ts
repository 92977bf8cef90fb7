import { mkdir, realpath, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { expectNoLeaks, type McpSession, type ReadOutcome, useHarness } from './harness.js'
import {
  expectShape,
  JobStatusShape,
  PermissionInteractionShape,
  QuestionInteractionShape,
} from './shapes.js'

// Nothing the gateway relays from the runtime carries a host path or an upstream id: the fake
// runtime answers with message text, tool titles, permission patterns, questions, errors, diffs,
// todos and session titles that quote the workspace root (as configured and as its realpath),
// paths outside it and upstream ids, and every tool output (structured AND text content) and
// resource read must come out rewritten.

const h = useHarness()

const SYNTHETIC_ID = 'ses_1a2b3c4d5e6fABCDEFGHIJKLMN'
const FOREIGN_DIR = '/srv/other-host/private'
// Any OpenCode id shape, whatever its prefix (the test's own, independent of src/redact.ts).
const ID_SHAPE = /(?:ses|msg|prt|per|que|usr|pty|tool|wrk|job|evt)_[0-9a-f]{12}[0-9A-Za-z]{14}/
// Handles are base64url and could, in theory, contain anything; they are gateway-made.
const withoutHandles = (text: string): string => text.replace(/v1\.[A-Za-z0-9_-]{40,}/g, '<handle>')

interface Roots {
  /** The root as the gateway under test is configured. */
  configured: string
  /** Every form of it the runtime may report (configured, realpath). */
  forms: string[]
}

function expectClean(text: string, roots: Roots): void {
  const clean = withoutHandles(text)
  for (const form of roots.forms) expect(clean).not.toContain(form)
  expect(clean).not.toContain(h.creds.stateDir)
  expect(clean).not.toContain(FOREIGN_DIR)
  expect(clean).not.toMatch(ID_SHAPE)
}

/** Everything a client gets from one tool call: structured content and text content. */
async function callClean(
  client: McpSession,
  roots: Roots,
  name: string,
  args: Record<string, unknown>,
): Promise<{ structured: Record<string, unknown>; text: string }> {
  const out = await client.call(name, args)
  if (out.kind !== 'result' || out.isError || !out.structured)
    throw new Error(`${name} failed: ${JSON.stringify(out)}`)
  expectClean(JSON.stringify(out.structured), roots)
  expectClean(out.text, roots)
  return { structured: out.structured, text: out.text }
}

function readClean(out: ReadOutcome, roots: Roots): Record<string, unknown> {
  expect(out.ok, JSON.stringify(out.error)).toBe(true)
  expectClean(out.text ?? '', roots)
  return JSON.parse(out.text ?? '') as Record<string, unknown>
}

/**
 * Runs one job through a permission ask, a question, a completed turn and a failed turn, every
 * runtime string quoting `reported` (a form of the workspace root), paths outside it and ids.
 */
async function leakyJob(client: McpSession, roots: Roots, reported: string) {
  const started = expectShape(
    JobStatusShape,
    await client.ok('gateway.agent.run', { message: 'leaky work', waitMs: 0 }),
  )
  const sid = await h.sessionId(client.who, started.session)
  const userMessage = String((await h.open('job', client.who, started.job)).m)
  const session = h.fake.state.sessions.get(sid)
  if (session) session.title = `Work in ${reported}/src for ${sid}`

  const ask = h.fake.askPermission(sid, {
    permission: 'bash',
    patterns: [`cat ${reported}/src/a.ts`, `${reported}/*`, `ls ${FOREIGN_DIR}/keys`, `echo ${userMessage}`],
    always: [`cat ${reported}/*`, `ls ${FOREIGN_DIR}/*`],
  })
  const asking = await callClean(client, roots, 'gateway.job.get', { job: started.job })
  const permission = expectShape(
    PermissionInteractionShape,
    expectShape(JobStatusShape, asking.structured).interactions?.[0],
  )
  expect(permission.patterns).toEqual(['cat src/a.ts', '*', 'ls [outside workspace]', 'echo [id]'])
  // What `always` would approve is shown to the one policy that may give it, rewritten the same way.
  expect(permission.alwaysPatterns).toEqual(
    client.who === 'full' ? ['cat *', 'ls [outside workspace]'] : undefined,
  )
  expect(JSON.parse(asking.text)).toEqual(asking.structured)
  // Only full may approve; a rejection with a note lets the turn go on, too.
  await client.ok(
    'gateway.interaction.respond',
    client.who === 'full'
      ? { interaction: permission.interaction, decision: 'once' }
      : { interaction: permission.interaction, decision: 'reject', message: 'not that' },
  )
  expect(h.fake.state.permissions.has(ask.id)).toBe(false)

  h.fake.askQuestion(sid, [
    {
      header: `Overwrite ${reported}/README.md?`,
      question: `The file ${reported}/README.md exists (session ${sid}); also ${FOREIGN_DIR}/notes.txt?`,
      options: [
        { label: `Keep ${reported}/README.md`, description: `ses ${SYNTHETIC_ID}` },
        { label: 'Replace', description: `with ${FOREIGN_DIR}/template.md` },
      ],
    },
  ])
  const questioned = await callClean(client, roots, 'gateway.job.get', { job: started.job })
  const question = expectShape(
    QuestionInteractionShape,
    expectShape(JobStatusShape, questioned.structured).interactions?.[0],
  )
  expect(question.questions[0]).toMatchObject({
    header: 'Overwrite README.md?',
    question: 'The file README.md exists (session [id]); also [outside workspace]?',
    options: [
      { label: 'Keep README.md', description: 'ses [id]' },
      { label: 'Replace', description: 'with [outside workspace]' },
    ],
  })
  expect(JSON.parse(questioned.text)).toEqual(questioned.structured)
  await client.ok('gateway.interaction.respond', {
    interaction: question.interaction,
    answers: [['Replace']],
  })

  for (const message of h.fake.state.messages.get(sid) ?? [])
    for (const part of message.parts)
      if (part.type === 'tool')
        (part.state as { title?: string }).title = `Read ${reported}/src/a.ts in ${sid} via ${FOREIGN_DIR}/x`
  h.fake.completeTurn(
    sid,
    `Edited ${reported}/src/a.ts (not ${reported}-old/src/b.ts) from ${reported}. ` +
      `Left ${h.creds.stateDir}/credentials alone and ${FOREIGN_DIR}/keys too. ` +
      `<task id="${sid}">subagent ${SYNTHETIC_ID} answered ${userMessage}</task> ` +
      'See https://example.com/docs/a and/or ask.',
    {
      diffs: [
        {
          file: `${reported}/src/a.ts`,
          path: `${reported}/src/a.ts`,
          status: 'modified',
          additions: 1,
          deletions: 1,
          patch: `Index: ${reported}/src/a.ts\n-const session = '${sid}'\n+const dir = '${FOREIGN_DIR}/x'\n`,
        } as never,
      ],
      todos: [
        {
          content: `check ${reported}/src/a.ts for ${sid} and ${FOREIGN_DIR}/y`,
          status: 'pending',
          priority: 'high',
        },
      ],
    },
  )
  const done = await callClean(client, roots, 'gateway.job.get', { job: started.job, waitMs: 5_000 })
  const completed = expectShape(JobStatusShape, done.structured)
  expect(completed.status).toBe('completed')
  expect(completed.text).toBe(
    'Edited src/a.ts (not [outside workspace]) from .. Left [outside workspace] alone and [outside workspace] too. ' +
      '<task id="[id]">subagent [id] answered [id]</task> See https://example.com/docs/a and/or ask.',
  )
  expect(completed.changedFiles?.map((f) => f.file)).toEqual(['src/a.ts'])
  expect(completed.todos?.[0]?.content).toBe('check src/a.ts for [id] and [outside workspace]')

  const failing = expectShape(
    JobStatusShape,
    await client.ok('gateway.agent.run', { message: 'fail leaky', session: started.session, waitMs: 0 }),
  )
  h.fake.failTurn(sid, {
    name: 'APIError',
    message: `ENOENT: no such file or directory, open '${reported}/src/gone.ts' (${sid}, ${FOREIGN_DIR}/z)`,
  })
  const failed = expectShape(
    JobStatusShape,
    (await callClean(client, roots, 'gateway.job.get', { job: failing.job, waitMs: 5_000 })).structured,
  )
  expect(failed.error).toEqual({
    name: 'APIError',
    message: "ENOENT: no such file or directory, open 'src/gone.ts' ([id], [outside workspace])",
  })
  return { session: started.session, job: started.job, failedJob: failing.job }
}

async function expectCleanViews(
  client: McpSession,
  roots: Roots,
  run: { session: string; job: string; failedJob: string },
): Promise<void> {
  const got = await callClean(client, roots, 'gateway.session.get', {
    session: run.session,
    include: ['messages', 'diff', 'todos'],
  })
  const view = got.structured as {
    session: { title: string }
    messages: Array<{ text: string; tools?: Array<{ title?: string }>; error?: { message: string } }>
    diff: Array<{ file: string; patch?: string }>
    todos: Array<{ content: string }>
  }
  expect(view.session.title).toBe('Work in src for [id]')
  const titles = view.messages.flatMap((m) => m.tools ?? []).map((t) => t.title)
  expect(titles.length).toBeGreaterThan(0)
  for (const title of titles) expect(title).toBe('Read src/a.ts in [id] via [outside workspace]')
  expect(view.messages.some((m) => m.text.startsWith('Edited src/a.ts'))).toBe(true)
  expect(view.messages.find((m) => m.error)?.error?.message).toContain("open 'src/gone.ts'")
  expect(view.diff).toEqual([
    {
      file: 'src/a.ts',
      status: 'modified',
      additions: 1,
      deletions: 1,
      patch: "Index: src/a.ts\n-const session = '[id]'\n+const dir = '[outside workspace]'\n",
    },
  ])
  expect(view.todos[0]?.content).toBe('check src/a.ts for [id] and [outside workspace]')

  const listed = await callClean(client, roots, 'gateway.session.list', {})
  expect(JSON.stringify(listed.structured)).toContain('Work in src for [id]')

  for (const uri of [
    `gateway://sessions/${run.session}/messages`,
    `gateway://sessions/${run.session}/diff`,
    `gateway://sessions/${run.session}/todos`,
    `gateway://jobs/${run.job}`,
    `gateway://jobs/${run.failedJob}`,
  ]) {
    readClean(await client.read(uri), roots)
  }
  const todos = readClean(await client.read(`gateway://sessions/${run.session}/todos`), roots)
  expect(todos).toEqual({
    todos: [
      { content: 'check src/a.ts for [id] and [outside workspace]', status: 'pending', priority: 'high' },
    ],
  })
}

describe('relayed runtime data carries no host path and no upstream id', () => {
  let real: Roots
  beforeAll(async () => {
    const configured = h.creds.workspace
    real = { configured, forms: [...new Set([configured, await realpath(configured)])] }
  })

  it('rewrites the workspace root as configured, outside paths and ids in every tool output and resource', async () => {
    const run = await leakyJob(h.clients.full, real, real.configured)
    await expectCleanViews(h.clients.full, real, run)
    expectNoLeaks(h)
  })

  it('rewrites the realpath of a symlinked workspace root, which the runtime may report instead', async () => {
    const link = join(h.creds.stateDir, 'workspace-link')
    await mkdir(join(h.creds.workspace, 'src'), { recursive: true })
    await symlink(h.creds.workspace, link)
    const roots: Roots = { configured: link, forms: [link, await realpath(link)] }
    const gateway = h.extraGateway({ gateway: { workspaceRoot: link } })
    const client = await h.connect('read', { gateway })
    // The runtime reports the canonical path; the gateway was configured with the link.
    const run = await leakyJob(client, roots, await realpath(link))
    await expectCleanViews(client, roots, run)
    // And the configured (link) form, too.
    const again = await leakyJob(client, roots, link)
    await expectCleanViews(client, roots, again)
    expectNoLeaks(h)
  })
})
