import { promptsFor, resourceTemplatesFor, toolsFor } from '@sallyport/policy'
import { describe, expect, it } from 'vitest'
import { createGateway } from '../../src/index.js'
import { captureLogger, makeCredentials, rpc, testSecret, unreachableRuntime } from '../helpers.js'
import { expectNoLeaks, POLICIES, type PolicyName, useHarness, WHO, type Who } from './harness.js'
import {
  CatalogShape,
  expectShape,
  PROMPTS,
  SESSION_TEMPLATES,
  TOOLS_OF,
  WORKSPACE_TEMPLATE,
} from './shapes.js'

// Catalog surface per policy: tools/list, gateway.catalog.get, resource templates, prompts, and
// the policy filter (a hidden tool is indistinguishable from an unknown one).

const h = useHarness()

const USERNAME: Record<PolicyName, string> = { chat: 'discord', read: 'reader', full: 'owner' }

const READ_ONLY_TOOLS = new Set([
  'gateway.job.get',
  'gateway.session.list',
  'gateway.session.get',
  'gateway.workspace.search',
  'gateway.workspace.read',
  'gateway.catalog.get',
])
const DESTRUCTIVE_TOOLS = new Set(['gateway.job.cancel', 'gateway.session.delete'])

describe('tools/list', () => {
  it.each(POLICIES)('lists exactly the %s tools, each with input and output schemas', async (policy) => {
    const { tools } = await h.clients[WHO[policy]].client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS_OF[policy])
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object')
      expect(tool.outputSchema?.type, tool.name).toBe('object')
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(10)
    }
  })

  it.each(POLICIES)(
    'gives every %s tool read-only and destructive hints that match what it does',
    async (policy) => {
      const { tools } = await h.clients[WHO[policy]].client.listTools()
      for (const tool of tools) {
        expect(tool.annotations?.readOnlyHint, tool.name).toBe(READ_ONLY_TOOLS.has(tool.name))
        expect(tool.annotations?.destructiveHint, tool.name).toBe(DESTRUCTIVE_TOOLS.has(tool.name))
        expect(typeof tool.annotations?.idempotentHint, tool.name).toBe('boolean')
      }
    },
  )

  it.each(POLICIES)('registers what the %s policy tables list, in their order', async (policy) => {
    const { client } = h.clients[WHO[policy]]
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(toolsFor(policy))
    expect(
      (await client.listResourceTemplates()).resourceTemplates.map((t) => [t.name, t.uriTemplate]),
    ).toEqual(resourceTemplatesFor(policy).map((t) => [t.name, t.uriTemplate]))
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(promptsFor(policy))
  })

  it.each(POLICIES)('shows the same %s tools to a 2025-era (legacy) client', async (policy) => {
    const legacy = await h.connect(WHO[policy], { mode: 'legacy' })
    const { tools } = await legacy.client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS_OF[policy])
    expect(legacy.client.getNegotiatedProtocolVersion()).toMatch(/^2025-/)
    await legacy.close()
  })
})

describe('gateway.catalog.get', () => {
  it.each(POLICIES)(
    'reports the %s policy, its principal and exactly its tools, resources and prompts',
    async (policy) => {
      const out = await h.clients[WHO[policy]].call('gateway.catalog.get', {})
      expect(out.kind === 'result' && !out.isError).toBe(true)
      if (out.kind !== 'result') return
      const catalog = expectShape(CatalogShape, out.structured)
      expect(catalog).toMatchObject({ service: 'sallyport', policy, principal: USERNAME[policy] })
      expect([...catalog.tools].sort()).toEqual(TOOLS_OF[policy])
      expect([...catalog.prompts].sort()).toEqual(PROMPTS)
      const resources = [
        'gateway.session.messages',
        'gateway.session.diff',
        'gateway.session.todos',
        'gateway.job',
        ...(policy === 'chat' ? [] : ['gateway.workspace.file']),
      ]
      expect([...catalog.resources].sort()).toEqual(resources.sort())
      expect(JSON.parse(out.text)).toEqual(out.structured)
    },
  )

  it('never names the runtime, its agents, providers, config or credentials', async () => {
    const mark = h.fake.requests.length
    const bodies = await Promise.all(POLICIES.map((p) => h.clients[WHO[p]].call('gateway.catalog.get', {})))
    const text = JSON.stringify(bodies)
    for (const word of [
      'opencode',
      'fake-key',
      'apiKey',
      'provider',
      'remote-full',
      'build',
      'bash',
      '/workspace',
    ])
      expect(text).not.toContain(word)
    expect(h.requestsSince(mark)).toEqual([])
  })

  it('refuses a non-empty argument object as invalid input', async () => {
    const out = await h.clients.chat.call('gateway.catalog.get', { policy: 'full' })
    expect(out).toMatchObject({ kind: 'result', isError: true })
  })
})

describe('policy filter: hidden tools behave exactly like unknown tools', () => {
  const hidden: Array<[Who, string, Record<string, unknown>]> = [
    ['chat', 'gateway.workspace.search', { mode: 'files', query: 'x' }],
    ['chat', 'gateway.workspace.read', { path: 'README.md' }],
    ['chat', 'gateway.session.fork', { session: 'v1.AAAA' }],
    ['chat', 'gateway.session.delete', { session: 'v1.AAAA' }],
    ['chat2', 'gateway.workspace.read', { path: 'README.md' }],
    ['read', 'gateway.session.fork', { session: 'v1.AAAA' }],
    ['read', 'gateway.session.delete', { session: 'v1.AAAA' }],
  ]

  it.each(hidden)(
    '%s calling %s gets the unknown-tool answer and the runtime is not touched',
    async (who, name, args) => {
      const mark = h.fake.requests.length
      const hiddenOut = await h.clients[who].call(name, args)
      const unknownOut = await h.clients[who].call('gateway.no.such.tool', args)
      expect(hiddenOut.kind).toBe('rpc-error')
      const norm = (o: unknown) =>
        JSON.stringify(o).replaceAll(name, '<tool>').replaceAll('gateway.no.such.tool', '<tool>')
      expect(norm(hiddenOut)).toEqual(norm(unknownOut))
      expect(hiddenOut).toMatchObject({ kind: 'rpc-error', code: -32602 })
      expect(h.requestsSince(mark)).toEqual([])
    },
  )

  it('does not list a hidden tool to chat even though full has it', async () => {
    const chat = (await h.clients.chat.client.listTools()).tools.map((t) => t.name)
    const full = (await h.clients.full.client.listTools()).tools.map((t) => t.name)
    expect(full).toContain('gateway.session.delete')
    expect(chat).not.toContain('gateway.session.delete')
    expect(chat.filter((n) => n.startsWith('gateway.workspace.'))).toEqual([])
  })
})

describe('resource templates', () => {
  it.each(POLICIES)('lists the %s templates (workspace files only for read and full)', async (policy) => {
    const { resourceTemplates } = await h.clients[WHO[policy]].client.listResourceTemplates()
    const expected = policy === 'chat' ? SESSION_TEMPLATES : [...SESSION_TEMPLATES, WORKSPACE_TEMPLATE].sort()
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(expected)
  })

  it.each(POLICIES)(
    'lists no concrete resources for %s (every resource is a handle template)',
    async (policy) => {
      const { resources } = await h.clients[WHO[policy]].client.listResources()
      expect(resources).toEqual([])
    },
  )
})

describe('prompts', () => {
  it.each(POLICIES)(
    'lists the four workflow prompts for %s, each with task and optional path',
    async (policy) => {
      const { prompts } = await h.clients[WHO[policy]].client.listPrompts()
      expect(prompts.map((p) => p.name).sort()).toEqual(PROMPTS)
      for (const prompt of prompts) {
        const args = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, a.required === true]))
        expect(args, prompt.name).toEqual({ task: true, path: false })
      }
    },
  )

  const cases = POLICIES.flatMap((policy) => PROMPTS.map((name) => [policy, name] as const))
  it.each(cases)(
    '%s gets %s as one user message that points at gateway.agent.run, without touching the runtime',
    async (policy, name) => {
      const mark = h.fake.requests.length
      const result = await h.clients[WHO[policy]].client.getPrompt({
        name,
        arguments: { task: 'the login page times out', path: 'src/login.ts' },
      })
      expect(result.messages).toHaveLength(1)
      const [message] = result.messages
      expect(message?.role).toBe('user')
      const text = (message?.content as { type: string; text: string } | undefined)?.text
      expect(text).toContain('the login page times out')
      expect(text).toContain('src/login.ts')
      expect(text).toContain('gateway.agent.run')
      expect(h.requestsSince(mark)).toEqual([])
      expect(h.turns.length).toBe(0)
    },
  )

  it.each([
    ['an empty task', { task: '' }],
    ['a task of 8001 characters', { task: 'x'.repeat(8001) }],
    ['a path of 1025 characters', { task: 'x', path: 'p'.repeat(1025) }],
    ['no task', {}],
  ])('refuses %s with an invalid-params error', async (_name, args) => {
    await expect(
      h.clients.chat.client.getPrompt({ name: 'gateway.review', arguments: args as Record<string, string> }),
    ).rejects.toMatchObject({ code: -32602 })
  })

  it('accepts a task of exactly 8000 characters', async () => {
    const result = await h.clients.chat.client.getPrompt({
      name: 'gateway.explain',
      arguments: { task: 'y'.repeat(8000) },
    })
    expect((result.messages[0]?.content as { text: string } | undefined)?.text).toContain('y'.repeat(8000))
  })

  it('answers an unknown prompt with an invalid-params error', async () => {
    await expect(
      h.clients.full.client.getPrompt({ name: 'gateway.admin', arguments: { task: 'x' } }),
    ).rejects.toMatchObject({ code: -32602 })
  })
})

describe('a freshly started gateway', () => {
  it('serves concurrent first requests instead of answering 503 while the key store loads', async () => {
    const creds = await makeCredentials()
    const gateway = createGateway({
      keys: creds.resolver,
      handleSecret: testSecret(),
      runtime: unreachableRuntime,
      workspaceRoot: creds.workspace,
      logger: captureLogger().logger,
    })
    try {
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }
      const keys = [creds.keys.full, creds.keys.read, creds.keys.chat, creds.keys.full]
      const statuses = await Promise.all(
        keys.map(async (key) => {
          const res = await gateway.fetch(
            rpc('http://gateway.test/mcp', init, { authorization: `Bearer ${key}` }),
          )
          await res.body?.cancel()
          return res.status
        }),
      )
      expect(statuses).toEqual([200, 200, 200, 200])
    } finally {
      await gateway.close()
      await creds.cleanup()
    }
  })
})

describe('leaks', () => {
  it('never sent the runtime credential in any response or log line', async () => {
    // No upstream object exists in this file yet: make one so the scan has ids to look for.
    await h.clients.chat.ok('gateway.agent.run', { message: 'hello', waitMs: 0 })
    expectNoLeaks(h)
  })
})
