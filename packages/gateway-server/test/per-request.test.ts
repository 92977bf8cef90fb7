import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { toolsFor } from '@sallyport/policy'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../src/index.js'
import { bufferedDestination, createLogger } from '../src/logger.js'
import {
  type Credentials,
  captureLogger,
  makeCredentials,
  rpc,
  rpcBody,
  testSecret,
  unreachableRuntime,
} from './helpers.js'

// What each request builds is only what it needs, and what is shared between requests (JSON
// schemas, parsed templates, request ids, gathered log lines) never carries one request's or one
// credential's state into another's.

const BASE = 'http://gateway.test'
const LEGACY = { 'mcp-protocol-version': '2025-06-18' }
const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

let creds: Credentials
let gateway: Gateway
let logs: ReturnType<typeof captureLogger>

beforeAll(async () => {
  creds = await makeCredentials()
  await writeFile(join(creds.workspace, 'notes.txt'), 'hello\n')
  logs = captureLogger()
  gateway = createGateway({
    keys: creds.resolver,
    handleSecret: testSecret(),
    runtime: unreachableRuntime,
    workspaceRoot: creds.workspace,
    logger: logs.logger,
  })
})
afterAll(async () => {
  await gateway.close()
  await creds.cleanup()
})

type Rpc = { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } }
const auth = (key: string) => ({ authorization: `Bearer ${key}` })
const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
})

/** One tools/call as a 2026-07-28 client sends it (the modern path: one message, no handshake). */
async function modernCall(key: string, name: string, args: Record<string, unknown> = {}): Promise<Rpc> {
  const res = await gateway.fetch(
    rpc(
      `${BASE}/mcp`,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args, _meta: MODERN_META } },
      { ...auth(key), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
    ),
  )
  return rpcBody<Rpc>(res)
}
async function legacy(key: string, body: unknown): Promise<unknown> {
  const res = await gateway.fetch(rpc(`${BASE}/mcp`, body, { ...auth(key), ...LEGACY }))
  return rpcBody(res)
}
const toolNames = async (key: string): Promise<string[]> => {
  const answer = (await legacy(key, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })) as {
    result: { tools: Array<{ name: string }> }
  }
  return answer.result.tools.map((t) => t.name)
}

describe('per-request servers with shared, per-policy parts', () => {
  it('never lets one credential see or call another role’s tools, requests alternating', async () => {
    for (let round = 0; round < 3; round++) {
      // chat has no workspace tools; full does: the same tool, called in turn by both.
      const byFull = await modernCall(creds.keys.full, 'gateway.workspace.read', { path: 'notes.txt' })
      expect(byFull.result?.isError).not.toBe(true)
      expect(JSON.stringify(byFull.result?.structuredContent)).toContain('hello')
      const byChat = await modernCall(creds.keys.chat, 'gateway.workspace.read', { path: 'notes.txt' })
      expect(byChat.result).toBeUndefined()
      expect(byChat.error?.message).toMatch(/not found/i)
      // read lacks session.fork, full has it (an invalid handle: refused before the runtime).
      const forkByRead = await modernCall(creds.keys.read, 'gateway.session.fork', { session: 'v1.x' })
      expect(forkByRead.error?.message).toMatch(/not found/i)
      const forkByFull = await modernCall(creds.keys.full, 'gateway.session.fork', { session: 'v1.x' })
      expect(forkByFull.error).toBeUndefined()
      expect(forkByFull.result?.isError).toBe(true)
      // Each lists its own catalog, and catalog.get answers for its own caller.
      for (const [key, policy, username] of [
        [creds.keys.read, 'read', 'reader'],
        [creds.keys.full, 'full', 'owner'],
        [creds.keys.chat, 'chat', 'discord'],
      ] as const) {
        expect(await toolNames(key)).toEqual(toolsFor(policy))
        const catalog = (await modernCall(key, 'gateway.catalog.get')).result?.structuredContent
        expect(catalog).toMatchObject({ policy, principal: username, tools: [...toolsFor(policy)] })
      }
    }
  })

  it('serves a batch of tool calls tool by tool: the allowed one answered, the hidden one unknown', async () => {
    const res = await gateway.fetch(
      rpc(
        `${BASE}/mcp`,
        [call(1, 'gateway.catalog.get'), call(2, 'gateway.workspace.read', { path: 'notes.txt' })],
        { ...auth(creds.keys.chat), ...LEGACY },
      ),
    )
    // A JSON array, or one SSE event per answer.
    const text = await res.text()
    const answers: Rpc[] = text.startsWith('[')
      ? JSON.parse(text)
      : text
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .flatMap((l) => JSON.parse(l.slice(6)) as Rpc | Rpc[])
    const byId = new Map(answers.map((a) => [a.id, a]))
    expect(byId.get(1)?.result?.structuredContent).toMatchObject({ policy: 'chat' })
    expect(byId.get(2)?.error?.message).toMatch(/not found/i)
  })

  it('advertises the same JSON schemas on every request, unchanged by being shared', async () => {
    const list = async (key: string) =>
      (
        (await legacy(key, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })) as {
          result: { tools: Array<{ name: string; inputSchema: unknown; outputSchema: unknown }> }
        }
      ).result.tools
    const first = await list(creds.keys.full)
    await modernCall(creds.keys.full, 'gateway.catalog.get')
    const again = await list(creds.keys.full)
    expect(again).toEqual(first)
    const catalog = first.find((t) => t.name === 'gateway.catalog.get')
    expect(catalog?.outputSchema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['policy']),
    })
    // chat shares the schemas of the tools it has, never the list of another policy.
    expect((await list(creds.keys.chat)).map((t) => t.name)).toEqual(toolsFor('chat'))
  })

  it('still validates a tool’s own output against its schema (shared schema, real validation)', async () => {
    // catalog.get answers with its schema; the call succeeding is the validation passing.
    const out = await modernCall(creds.keys.read, 'gateway.catalog.get')
    expect(out.result?.isError).not.toBe(true)
    expect(out.result?.structuredContent).toMatchObject({ service: 'sallyport', policy: 'read' })
  })
})

describe('request ids', () => {
  it('are 16 hex digits, different on every request, and the audit line carries the same one', async () => {
    const mark = logs.lines().length
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const res = await gateway.fetch(
        rpc(`${BASE}/mcp`, call(1, 'gateway.catalog.get'), { ...auth(creds.keys.full), ...LEGACY }),
      )
      await res.text()
      ids.push(res.headers.get('x-request-id') ?? '')
    }
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/)
    expect(new Set(ids).size).toBe(5)
    // Not a counter: two consecutive ids tell nothing of the requests between them (an attacker
    // could otherwise count everyone's traffic), and no prefix is shared.
    const numbers = ids.map((id) => BigInt(`0x${id}`))
    for (let i = 1; i < numbers.length; i++)
      expect((numbers[i] as bigint) - (numbers[i - 1] as bigint)).not.toBe(1n)
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBeGreaterThan(1)
    const audit = logs
      .lines()
      .slice(mark)
      .filter((l) => l.event === 'audit')
    expect(audit.map((l) => l.requestId)).toEqual(ids)
    for (const line of audit)
      expect(Object.keys(line)).toEqual(
        expect.arrayContaining([
          'requestId',
          'username',
          'auth',
          'httpMethod',
          'rpcMethod',
          'tool',
          'outcome',
          'status',
          'durationMs',
        ]),
      )
  })
})

describe('gathered log lines', () => {
  it('are written out when the gateway closes: none is left behind in the buffer', async () => {
    const file = join(creds.stateDir, 'audit-close.log')
    const closing = createGateway({
      keys: creds.resolver,
      handleSecret: testSecret(),
      runtime: unreachableRuntime,
      workspaceRoot: creds.workspace,
      logger: createLogger({ destination: bufferedDestination(file) as unknown as NodeJS.WritableStream }),
    })
    for (let i = 0; i < 3; i++) {
      const res = await closing.fetch(
        rpc(`${BASE}/mcp`, call(1, 'gateway.catalog.get'), { ...auth(creds.keys.full), ...LEGACY }),
      )
      await res.text()
    }
    // Gathered, not yet written (a line is far below the buffer size).
    expect(await readFile(file, 'utf8').catch(() => '')).not.toContain('"event":"audit"')
    await closing.close()
    const lines = (await readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => l.includes('"event":"audit"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines).toHaveLength(3)
    for (const line of lines) expect(line).toMatchObject({ tool: 'gateway.catalog.get', outcome: 'ok' })
    await rm(file, { force: true })
  })
})
