import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ScriptEntry, type ScriptToolCall, step } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildHostileWorkspace, type HostileWorkspace, runScript } from './agent-tools.js'
import { type E2E, type McpSession, startE2E } from './harness.js'

// Issue 9: the runtime's own tools, run by the agent of a remote credential, obey the workspace
// guard. Real runtime, real gateway, real MCP clients; the scripted model makes the hostile tool
// calls and records everything the runtime sends back to it.

let e2e: E2E
let ws: HostileWorkspace
const clients: Record<'chat' | 'read' | 'full', McpSession> = {} as never

beforeAll(async () => {
  e2e = await startE2E()
  ws = buildHostileWorkspace(e2e)
  clients.full = await e2e.connect(e2e.creds.keys.full, 'auto')
  clients.read = await e2e.connect(e2e.creds.keys.read, 'legacy')
  clients.chat = await e2e.connect(e2e.creds.keys.chat, 'auto')
}, 90_000)

afterAll(async () => {
  for (const c of Object.values(clients)) await c?.close().catch(() => undefined)
  await e2e?.stop()
})

const abs = (entry: string): string => join(ws.root, entry)

/** Every hostile call of one tool, one call per entry. */
function hostileCalls(tool: string): ScriptToolCall[] {
  const files = [...ws.secrets.keys()]
  switch (tool) {
    case 'read':
      return [
        ...[...ws.riders.keys()].map((f) => ({ name: 'read', input: { filePath: abs(f) } })),
        ...files.map((f) => ({ name: 'read', input: { filePath: abs(f) } })),
        { name: 'read', input: { filePath: 'notes.txt' } },
      ]
    case 'list':
    case 'glob':
      return ws.directories.map((d) => ({
        name: tool,
        input: tool === 'glob' ? { pattern: '*', path: abs(d) } : { path: abs(d) },
      }))
    case 'grep':
      return [{ name: 'grep', input: { pattern: 'SECRET', path: ws.root } }]
    case 'edit':
      return files.map((f) => ({
        name: 'edit',
        input: { filePath: abs(f), oldString: 'SECRET', newString: 'x' },
      }))
    case 'write':
      return [
        ...files.map((f) => ({ name: 'write', input: { filePath: abs(f), content: 'overwritten' } })),
        { name: 'write', input: { filePath: abs('rootlink/planted.sh'), content: 'planted' } },
      ]
    default:
      throw new Error(tool)
  }
}

const POLICIES = ['chat', 'read', 'full'] as const
// 1.18.33 has no `list` tool (the guard still knows one, for releases that do).
const FILE_TOOLS = ['read', 'glob', 'grep', 'edit', 'write'] as const

const pendingAsk = (out: { structured: Record<string, unknown> }) =>
  (out.structured.interactions as Array<Record<string, unknown>> | undefined)?.[0]

/**
 * Runs `steps`, expects the run to stop on one permission ask of `permission`, answers it with
 * `decision` and waits for the job to go on. Returns the ask as the client saw it and the outcome.
 */
async function askAndAnswer(
  client: McpSession,
  steps: ScriptEntry[],
  permission: string,
  decision: 'once' | 'reject',
  beforeAnswer?: (ask: Record<string, unknown> | undefined) => Promise<void>,
) {
  const run = await runScript(e2e, client, steps)
  expect(run.final.structured.status).toBe('input_required')
  const ask = pendingAsk(run.final)
  expect(ask).toMatchObject({ kind: 'permission', permission })
  await beforeAnswer?.(ask)
  const job = run.final.structured.job as string
  const respond = await client.call('gateway.interaction.respond', {
    interaction: ask?.interaction,
    decision,
  })
  expect(respond.isError ? respond.text : 'ok').toBe('ok')
  let out = await client.call('gateway.job.get', { job, waitMs: 20_000 })
  while (out.structured.status === 'running')
    out = await client.call('gateway.job.get', { job, waitMs: 10_000 })
  return { run, ask, out }
}

describe('every file-touching tool, every policy: no hostile entry reaches the model', () => {
  describe.each(POLICIES)('%s credential', (policy) => {
    it.each(FILE_TOOLS)('%s', async (tool) => {
      const run = await runScript(e2e, clients[policy], [
        step.calls(...hostileCalls(tool)),
        step.text('done'),
      ])
      // No call was turned into a question for the client: every one was refused outright.
      expect(run.final.structured.status).toBe('completed')
      for (const [entry, value] of [...ws.secrets, ...ws.riders])
        expect([entry, run.sentToModel.includes(value)]).toEqual([entry, false])
      const results = run.requests.at(-1)?.body?.messages?.filter((m) => m.role === 'tool') ?? []
      expect(results.length).toBeGreaterThan(0)
      for (const result of results)
        expect(String(result.content)).toMatch(
          /refused by the workspace guard|unavailable|not available|denied|rule/i,
        )
      // Nothing was written anywhere.
      expect(existsSync(join(ws.outside, 'planted.sh'))).toBe(false)
      for (const [entry, value] of ws.secrets) {
        if (entry === 'pipe' || entry === 'zero' || entry === 'environ') continue
        expect([entry, readFileSync(abs(entry), 'utf8').includes(value)]).toEqual([entry, true])
      }
    })
  })
})

describe('ordinary work still works', () => {
  it('a read credential reads an ordinary file, by absolute and by relative path', async () => {
    const run = await runScript(e2e, clients.read, [
      step.calls(
        { name: 'read', input: { filePath: abs(ws.benign.path) } },
        { name: 'read', input: { filePath: ws.benign.path } },
      ),
      step.text('done'),
    ])
    expect(run.final.structured.status).toBe('completed')
    expect(run.sentToModel.split(ws.benign.text).length - 1).toBeGreaterThanOrEqual(2)
  })

  it('a full credential writes a new file after approval, and only inside the workspace', async () => {
    const { out } = await askAndAnswer(
      clients.full,
      [step.write(abs('made/by-agent.txt'), 'written by the agent'), step.text('done')],
      'edit',
      'once',
    )
    expect(out.structured.status).toBe('completed')
    expect(readFileSync(abs('made/by-agent.txt'), 'utf8')).toBe('written by the agent')
  })
})

describe('listings', () => {
  it.each([
    ['read', 'a directory read', { name: 'read', input: { filePath: '.' } }],
    ['full', 'a glob over the workspace', { name: 'glob', input: { pattern: '*' } }],
  ] as const)('%s: %s names the ordinary file and no secret one', async (policy, _name, toolCall) => {
    const run = await runScript(e2e, clients[policy], [{ toolCall }, step.text('done')])
    expect(run.final.structured.status).toBe('completed')
    const listing = String(
      run.requests
        .at(-1)
        ?.body?.messages?.filter((m) => m.role === 'tool')
        .at(-1)?.content,
    )
    expect(listing).toContain(ws.benign.path)
    for (const name of ['KEY.PEM', '.ENV', '.envrc', 'kubeconfig', 'api-key.txt', 'terraform.tfstate'])
      expect([name, listing.includes(name)]).toEqual([name, false])
    // A directory read closes with "(N entries)": N counts only what is shown.
    const count = /\((\d+) entr(?:y|ies)\)/u.exec(listing)?.[1]
    if (count !== undefined) {
      const shown = listing
        .split('<entries>')[1]
        ?.split('\n(')[0]
        ?.split('\n')
        .filter((l) => l.trim() !== '')
      expect(Number(count)).toBe(shown?.length)
    }
  })
})

describe('what the client sees of these runs', () => {
  it('session views and job text carry no host path and no upstream id', async () => {
    const run = await runScript(e2e, clients.full, [
      step.calls(
        { name: 'read', input: { filePath: abs(ws.benign.path) } },
        { name: 'read', input: { filePath: abs('notes.txt') } },
        { name: 'glob', input: { pattern: '*', path: ws.root } },
      ),
      (req) => ({ text: `results: ${req.toolResults.join(' | ')}` }),
    ])
    expect(run.final.structured.status).toBe('completed')
    const view = await clients.full.call('gateway.session.get', {
      session: run.final.structured.session,
      include: ['messages', 'diff', 'todos'],
    })
    const relayed = JSON.stringify([run.final.structured, view.structured, view.text])
    expect(relayed).toContain(ws.benign.path)
    // Also not relative to `/`, as the runtime reports paths outside a git repository.
    expect(relayed).not.toContain(ws.root.slice(1))
    expect(relayed).not.toContain(e2e.stack.runtime.tempDir.slice(1))
    expect(relayed).not.toMatch(/\b(ses|msg|prt|per|que)_[0-9a-f]{12}[0-9A-Za-z]{14}/)
  })

  it('a permission ask names the file relative to the workspace', async () => {
    const { ask } = await askAndAnswer(
      clients.full,
      [step.write(abs('made/relative.txt'), 'x'), step.text('done')],
      'edit',
      'reject',
    )
    const shown = JSON.stringify(ask)
    expect(shown).toContain('made/relative.txt')
    expect(shown).not.toContain(ws.root.slice(1))
  })
})

describe('subagents', () => {
  it.each(POLICIES)(
    'a %s credential cannot start a subagent (the review ran a shell in one)',
    async (policy) => {
      const proof = join(ws.outside, `subagent-${policy}`)
      const run = await runScript(e2e, clients[policy], [step.task(`run touch ${proof}`), step.text('done')])
      expect(run.final.structured.status).toBe('completed')
      expect(existsSync(proof)).toBe(false)
      // No child session exists anywhere in the runtime.
      const sessions = await e2e.upstream.listSessions()
      expect(sessions.filter((s) => s.parentID !== undefined)).toEqual([])
      expect(run.sentToModel).not.toMatch(/ses_[0-9a-f]{12}/)
    },
  )
})

describe('web fetches', () => {
  it.each([
    ['the gateway on loopback', () => `${e2e.url}/health`],
    ['the runtime on loopback', () => `${e2e.stack.runtime.url}/session`],
    ['localhost by name', () => 'http://localhost:1/'],
    ['cloud metadata (link-local)', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a private network address', () => 'http://10.0.0.1/'],
    ['loopback written as a decimal number', () => 'http://2130706433/'],
    ['IPv6 loopback', () => 'http://[::1]/'],
  ])('a full credential cannot fetch %s, and is not even asked', async (_name, url) => {
    const run = await runScript(e2e, clients.full, [step.webfetch(url()), step.text('done')])
    expect(run.final.structured.status).toBe('completed')
    expect(run.sentToModel).toMatch(/local and private network addresses are not reachable/)
  })

  it('a fetch of a public address asks the full credential, and a rejection stops it', async () => {
    // A public address that is never approved, so nothing is ever sent to it.
    const steps = [step.webfetch('http://93.184.216.34/'), step.text('done')]
    const { ask, out } = await askAndAnswer(clients.full, steps, 'webfetch', 'reject', async (pending) => {
      const always = await clients.full.call('gateway.interaction.respond', {
        interaction: pending?.interaction,
        decision: 'always',
      })
      expect(always.structured).toMatchObject({ error: { code: 'forbidden' } })
    })
    // `always` would approve every URL for the whole runtime: only once or reject are offered.
    expect(ask?.allowedDecisions).toEqual(['once', 'reject'])
    expect(['completed', 'failed']).toContain(out.structured.status)
  })

  it('a fetch without a timeout is still relayed as a question (the runtime alone would fail every permission list)', async () => {
    const steps = [
      { toolCall: { name: 'webfetch', input: { url: 'http://93.184.216.34/', format: 'text' } } },
      step.text('done'),
    ]
    const { out } = await askAndAnswer(clients.full, steps, 'webfetch', 'reject')
    expect(['completed', 'failed']).toContain(out.structured.status)
  })

  it.each(['chat', 'read'] as const)('a %s credential cannot fetch at all', async (policy) => {
    const run = await runScript(e2e, clients[policy], [
      step.webfetch('http://93.184.216.34/'),
      step.text('done'),
    ])
    expect(run.final.structured.status).toBe('completed')
  })
})

describe("the runtime's secrets are not in the shell's environment", () => {
  it('an approved `env` in a full session shows no server password', async () => {
    const steps: ScriptEntry[] = [
      step.bash('env; echo env-done'),
      (req) => ({ text: `out ${req.toolResults.join('').length}` }),
    ]
    const { run, out } = await askAndAnswer(clients.full, steps, 'bash', 'once')
    expect(out.structured.status).toBe('completed')
    const after = e2e.stack.model.requestsFor(run.requests[0]?.scriptId ?? '')
    const sent = JSON.stringify(after.map((r) => r.body?.messages))
    expect(sent).toContain('env-done')
    expect(sent).toContain('OPENCODE_CONFIG_DIR') // the environment really was printed
    expect(sent).not.toContain(e2e.stack.runtime.password)
    expect(sent).not.toContain('OPENCODE_SERVER_PASSWORD')
  })

  it('the native API still requires the password (removing it from the environment did not open it)', async () => {
    const bare = await fetch(`${e2e.stack.runtime.url}/session`)
    expect(bare.status).toBe(401)
    const wrong = await fetch(`${e2e.stack.runtime.url}/session`, {
      headers: { authorization: `Basic ${Buffer.from(`${e2e.stack.runtime.username}:`).toString('base64')}` },
    })
    expect(wrong.status).toBe(401)
    expect((await e2e.stack.runtime.fetch('/session')).status).toBe(200)
  })
})
