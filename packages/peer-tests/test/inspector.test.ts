import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type NodeBinary,
  peerEnv,
  type RunResult,
  resolveBin,
  resolvePeerNode,
  runProcess,
} from '../src/index.ts'
import { CHAT_TOOLS, FULL_TOOLS, type PeerGateway, READ_TOOLS, startPeerGateway } from './harness.ts'

// The MCP Inspector's CLI (an independent client, itself on SDK v2 2.3.1) against the real
// gateway and runtime: every protocol era it offers, every policy's tool list, the catalog, a
// real agent turn, and a refused key. Keys travel on its command line inside this process only;
// its output is redacted before any assertion can print it.

const INSPECTOR = resolveBin('@modelcontextprotocol/inspector', 'inspector')
const ERAS = ['legacy', 'auto', 'modern'] as const
type Era = (typeof ERAS)[number]

let node: NodeBinary
let gw: PeerGateway
let home: string

beforeAll(async () => {
  node = resolvePeerNode({ minimum: '22.19.0' })
  gw = await startPeerGateway()
  home = await gw.tempDir('sallyport-inspector-home-')
})

afterAll(async () => {
  await gw?.stop()
})

async function inspect(key: string, era: Era, args: readonly string[]): Promise<RunResult> {
  const run = await runProcess(
    node.path,
    [
      INSPECTOR,
      '--cli',
      `${gw.url}/mcp`,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${key}`,
      '--protocol-era',
      era,
      // Never start an interactive OAuth flow: a refused key must end the run, not wait.
      '--stored-auth-only',
      '--format',
      'json',
      ...args,
    ],
    { timeoutMs: 30_000, env: peerEnv(home), secrets: Object.values(gw.keys) },
  )
  expect(run.timedOut, 'inspector timed out').toBe(false)
  return run
}

function resultOf(run: RunResult): Record<string, unknown> {
  expect(run.code, run.stderr.slice(-1000)).toBe(0)
  return (JSON.parse(run.stdout) as { result: Record<string, unknown> }).result
}

const countRpc = (method: string): number => gw.logs().filter((l) => l.rpcMethod === method).length

describe('MCP Inspector CLI against the gateway', () => {
  it.each(
    ERAS.flatMap((era) =>
      (
        [
          ['chat', CHAT_TOOLS],
          ['read', READ_TOOLS],
          ['full', FULL_TOOLS],
        ] as const
      ).map(([policy, tools]) => [era, policy, tools] as const),
    ),
  )('era %s: tools/list for a %s key shows exactly its tools', async (era, policy, tools) => {
    const result = resultOf(await inspect(gw.keys[policy], era, ['--method', 'tools/list']))
    const names = (result.tools as Array<{ name: string }>).map((t) => t.name).sort()
    expect(names).toEqual(tools)
    expect(names).toHaveLength({ chat: 7, read: 9, full: 11 }[policy])
  })

  it.each(ERAS)('era %s: gateway.catalog.get names the policy, the principal and the tools', async (era) => {
    const result = resultOf(
      await inspect(gw.keys.read, era, ['--method', 'tools/call', '--tool-name', 'gateway.catalog.get']),
    )
    expect(result.isError ?? false).toBe(false)
    const catalog = result.structuredContent as Record<string, unknown>
    expect(catalog).toMatchObject({ service: 'sallyport', policy: 'read', principal: 'reader' })
    expect([...(catalog.tools as string[])].sort()).toEqual(READ_TOOLS)
    expect(JSON.stringify(result)).not.toMatch(/provider|apiKey|password|bash/)
  })

  it('legacy era initializes (2025 wire); auto and modern use the 2026-07-28 wire without initialize', async () => {
    const call = ['--method', 'tools/call', '--tool-name', 'gateway.catalog.get']
    const before = countRpc('initialize')
    const legacy = resultOf(await inspect(gw.keys.chat, 'legacy', call))
    expect(countRpc('initialize')).toBe(before + 1)
    // On the 2026-07-28 wire every result names the server in its `_meta`; 2025 results do not.
    expect(legacy._meta).toBeUndefined()
    for (const era of ['auto', 'modern'] as const) {
      const result = resultOf(await inspect(gw.keys.chat, era, call))
      expect(countRpc('initialize')).toBe(before + 1)
      expect(result._meta).toMatchObject({ 'io.modelcontextprotocol/serverInfo': { name: 'sallyport' } })
    }
  })

  it('runs a real agent turn through gateway.agent.run and reads the session back', async () => {
    const marker = gw.stack.model.script([{ text: 'inspector says hello' }])
    const run = resultOf(
      await inspect(gw.keys.full, 'modern', [
        '--method',
        'tools/call',
        '--tool-name',
        'gateway.agent.run',
        '--tool-args-json',
        JSON.stringify({ message: `greet the inspector ${marker}`, waitMs: 20_000 }),
      ]),
    )
    expect(run.isError ?? false).toBe(false)
    const job = run.structuredContent as Record<string, unknown>
    expect(job.status).toBe('completed')
    expect(JSON.stringify(job)).toContain('inspector says hello')
    // Opaque handles only: no raw runtime id crosses the gateway.
    expect(JSON.stringify(run)).not.toMatch(/\b(ses|msg|per|que)_[A-Za-z0-9]/)
    const list = resultOf(
      await inspect(gw.keys.full, 'legacy', [
        '--method',
        'tools/call',
        '--tool-name',
        'gateway.session.list',
      ]),
    )
    // Handles are sealed afresh on every answer, so the runtime's one session is compared by count.
    const sessions = (list.structuredContent as { sessions: unknown[] }).sessions
    expect(sessions).toHaveLength(1)
  })

  it('ends with an error and no result for an unknown key; the gateway answered 401', async () => {
    const before = gw.logs().filter((l) => l.status === 401).length
    const run = await inspect(`agk_${'A'.repeat(43)}`, 'auto', ['--method', 'tools/list'])
    expect(run.code).not.toBe(0)
    expect(run.stdout).not.toContain('"tools"')
    expect(gw.logs().filter((l) => l.status === 401).length).toBeGreaterThan(before)
  })

  it('never printed a key: nothing it wrote needed redaction', async () => {
    const run = await inspect(gw.keys.chat, 'auto', ['--method', 'tools/list'])
    expect(run.stdout + run.stderr).not.toContain('[redacted]')
  })
})
