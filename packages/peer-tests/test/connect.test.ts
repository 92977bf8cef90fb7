import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { freePort, type Stack, startStack, waitFor } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type NodeBinary,
  peerEnv,
  type RunResult,
  resolveBin,
  resolvePeerNode,
  runProcess,
} from '../src/index.ts'
import { CHAT_TOOLS, FULL_TOOLS, READ_TOOLS } from './harness.ts'

// `sallyport connect <client>` end to end: the built CLI prints each snippet for a real stack,
// and the snippet is handed, unchanged, to the real client: the official SDK client for the
// desktop, VS Code and Cursor JSON (exactly their url and headers), the installed Inspector CLI
// for its command line (split by a real shell), and mcp-remote for the stdio bridge (spawned with
// exactly the printed arguments and env, spoken to over its stdio). The gateway is
// `sallyport serve` of that stack (so the URL the snippet names is where it really listens), in
// front of the real runtime (testkit). Placeholder snippets must be refused (401) until a key
// from `sallyport credential add` replaces the placeholder.

const CLI = resolveBin('sallyport', 'sallyport')
const INSPECTOR = resolveBin('@modelcontextprotocol/inspector', 'inspector')
const MCP_REMOTE = resolveBin('mcp-remote', 'mcp-remote')
const requireHere = createRequire(import.meta.url)
const versionOf = (pkg: string): string =>
  (JSON.parse(readFileSync(requireHere.resolve(`${pkg}/package.json`), 'utf8')) as { version: string })
    .version
const INSPECTOR_VERSION = versionOf('@modelcontextprotocol/inspector')
const MCP_REMOTE_VERSION = versionOf('mcp-remote')

const PLACEHOLDER = '<SALLYPORT_KEY>'
const TOOLS = { chat: CHAT_TOOLS, read: READ_TOOLS, full: FULL_TOOLS } as const
type Policy = keyof typeof TOOLS
const KEY_PATTERN = /agk_[A-Za-z0-9_-]{43}/g

let temp = ''
let dir = ''
let home = ''
let gatewayUrl = ''
let node: NodeBinary
let runtime: Stack | undefined
let serve: ChildProcess | undefined
let serveOutput = ''
/** Every key a test saw, checked against everything the gateway wrote at the end. */
const seenKeys: string[] = []

beforeAll(async () => {
  node = resolvePeerNode({ minimum: '22.19.0' })
  temp = await mkdtemp(join(tmpdir(), 'sallyport-connect-'))
  dir = join(temp, 'stack')
  home = join(temp, 'home')
  await mkdir(home)
  expect((await sallyport('init')).code).toBe(0)
  const configFile = join(dir, 'sallyport.json')
  const config = JSON.parse(await readFile(configFile, 'utf8'))
  config.gateway.port = await freePort()
  do config.moderator.port = await freePort()
  while (config.moderator.port === config.gateway.port)
  await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`)
  runtime = await startStack()
  const passwordFile = join(temp, 'native-password')
  await writeFile(passwordFile, runtime.runtime.password, { mode: 0o600 })
  serve = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      '--dir',
      dir,
      '--native-url',
      runtime.runtime.url,
      '--native-username',
      runtime.runtime.username,
      '--native-password-file',
      passwordFile,
      '--workspace',
      runtime.runtime.directory,
    ],
    { env: peerEnv(home), stdio: ['ignore', 'pipe', 'pipe'] },
  )
  serve.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    serveOutput += chunk
  })
  serve.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    serveOutput += chunk
  })
  const ready = await waitFor(() => logLines().find((line) => line.event === 'ready'), {
    timeoutMs: 60_000,
    description: 'sallyport serve ready',
    giveUp: () =>
      serve?.exitCode !== null || serve?.signalCode !== null
        ? new Error(`serve exited: ${serveOutput.slice(-500)}`)
        : undefined,
  })
  gatewayUrl = String(ready.mcpUrl)
  expect(gatewayUrl).toBe(`http://127.0.0.1:${config.gateway.port}/mcp`)
}, 180_000)

afterAll(async () => {
  if (serve && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve?.once('exit', resolve))
    serve.kill('SIGTERM')
    const timer = setTimeout(() => serve?.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  await runtime?.stop()
  if (temp) await rm(temp, { recursive: true, force: true })
}, 60_000)

/** `sallyport <args> --dir <stack>` (the built CLI), to completion. Its output is not redacted. */
function sallyport(...args: string[]): Promise<RunResult> {
  return runProcess(process.execPath, [CLI, ...args, '--dir', dir], { timeoutMs: 60_000, env: peerEnv(home) })
}

function logLines(): Array<Record<string, unknown>> {
  return serveOutput
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

const unauthorized = (): number => logLines().filter((line) => line.status === 401).length

/** Waits until the gateway has logged more 401 answers than `before` (its log is written gathered). */
async function expectRefused(before: number): Promise<void> {
  await waitFor(() => unauthorized() > before, { timeoutMs: 15_000, description: 'a 401 in the gateway log' })
}

/** The one key in `text`; fails unless there is exactly one occurrence. */
function onlyKey(text: string): string {
  const keys = text.match(KEY_PATTERN) ?? []
  expect(keys).toHaveLength(1)
  seenKeys.push(keys[0] as string)
  return keys[0] as string
}

/** A successful `connect` or `credential add` run: exit 0, and the key (if any) never on stderr. */
function succeeded(run: RunResult): RunResult {
  expect(run.code, run.stderr).toBe(0)
  expect(run.stderr).not.toMatch(KEY_PATTERN)
  return run
}

/** A new credential from the command the placeholder notes name. */
async function credentialAdd(username: string, policy: Policy): Promise<string> {
  return onlyKey(succeeded(await sallyport('credential', 'add', username, policy)).stdout)
}

/** What a POSIX shell makes of the printed command line: its words. */
function shellWords(line: string): string[] {
  const out = execFileSync('sh', ['-c', 'eval "set -- $LINE"; printf "%s\\0" "$@"'], {
    env: { LINE: line, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    encoding: 'utf8',
  })
  return out.split('\0').slice(0, -1)
}

interface HttpEntry {
  url: string
  headers: Record<string, string>
}

/** The server entry of a desktop, VS Code or Cursor snippet, checked against that client's shape. */
function httpEntry(client: 'desktop' | 'vscode' | 'cursor', config: Record<string, unknown>): HttpEntry {
  const servers = (client === 'vscode' ? config.servers : config.mcpServers) as Record<string, unknown>
  expect(Object.keys(servers)).toEqual(['sallyport'])
  const entry = servers.sallyport as HttpEntry & { type?: string }
  if (client === 'cursor') expect(Object.keys(entry).sort()).toEqual(['headers', 'url'])
  else {
    expect(Object.keys(entry).sort()).toEqual(['headers', 'type', 'url'])
    expect(entry.type).toBe('http')
  }
  expect(Object.keys(entry.headers)).toEqual(['Authorization'])
  return entry
}

/** The official SDK client with exactly `entry`'s url and headers: its tools and its catalog. */
async function useHttpEntry(
  entry: HttpEntry,
): Promise<{ tools: string[]; catalog: Record<string, unknown> }> {
  const client = new Client({ name: 'sallyport-connect-e2e', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }),
  )
  try {
    const { tools } = await client.listTools()
    const catalog = await client.callTool({ name: 'gateway.catalog.get', arguments: {} })
    return {
      tools: tools.map((tool) => tool.name).sort(),
      catalog: catalog.structuredContent as Record<string, unknown>,
    }
  } finally {
    await client.close()
  }
}

/** The Inspector CLI run with the printed line's arguments (after `npx <package>`), on Node ≥ 22.19. */
async function runInspectorLine(
  line: string,
  secrets: string[],
  extraEnv: Record<string, string> = {},
): Promise<RunResult> {
  const words = shellWords(line)
  expect(words.slice(0, 2)).toEqual(['npx', `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`])
  const run = await runProcess(node.path, [INSPECTOR, ...words.slice(2)], {
    timeoutMs: 60_000,
    env: peerEnv(await mkdtemp(join(temp, 'inspector-home-')), extraEnv),
    secrets,
  })
  expect(run.timedOut, 'the Inspector timed out').toBe(false)
  expect(run.stdout + run.stderr).not.toContain('[redacted]')
  return run
}

interface StdioEntry {
  command: string
  args: string[]
  env: Record<string, string>
}

/**
 * mcp-remote started as the printed entry says (`npx -y mcp-remote@<version> <args…>` with its
 * env; the installed package stands in for npx's download), driven over its stdio by the SDK's
 * StdioClientTransport. Each run gets a HOME of its own (mcp-remote keeps state in ~/.mcp-auth).
 */
async function useStdioEntry(
  entry: StdioEntry,
): Promise<{ tools: string[]; catalog: Record<string, unknown> }> {
  expect(entry.command).toBe('npx')
  expect(entry.args.slice(0, 2)).toEqual(['-y', `mcp-remote@${MCP_REMOTE_VERSION}`])
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, ...entry.args.slice(2)],
    env: { ...peerEnv(await mkdtemp(join(temp, 'mcp-remote-home-'))), ...entry.env },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const client = new Client({ name: 'sallyport-connect-e2e', version: '1.0.0' })
  try {
    await client.connect(transport)
    const { tools } = await client.listTools()
    const catalog = await client.callTool({ name: 'gateway.catalog.get', arguments: {} })
    return {
      tools: tools.map((tool) => tool.name).sort(),
      catalog: catalog.structuredContent as Record<string, unknown>,
    }
  } finally {
    await client.close().catch(() => {})
    // mcp-remote says which headers it uses, never their values.
    expect(stderr).not.toMatch(KEY_PATTERN)
  }
}

describe('sallyport connect: each snippet works with its real client', () => {
  it.each([
    ['desktop', 'full'],
    ['vscode', 'read'],
    ['cursor', 'chat'],
  ] as const)(
    '%s --credential: the SDK client with exactly its url and headers gets the %s tools',
    async (client, policy) => {
      const run = succeeded(
        await sallyport('connect', client, '--credential', `${client}-bot`, '--policy', policy),
      )
      const key = onlyKey(run.stdout)
      expect(run.stderr).toContain(`Created credential ${client}-bot (policy ${policy})`)
      const entry = httpEntry(client, JSON.parse(run.stdout))
      expect(entry.url).toBe(gatewayUrl)
      expect(entry.headers.Authorization).toBe(`Bearer ${key}`)
      const { tools, catalog } = await useHttpEntry(entry)
      expect(tools).toEqual(TOOLS[policy])
      expect(catalog).toMatchObject({ principal: `${client}-bot`, policy })
    },
    120_000,
  )

  it.each(['desktop', 'cursor'] as const)(
    '%s with the placeholder: refused (401) until a key from `credential add` replaces it',
    async (client) => {
      const run = succeeded(await sallyport('connect', client))
      expect(run.stdout).not.toMatch(KEY_PATTERN)
      expect(run.stdout).toContain(`"Bearer ${PLACEHOLDER}"`)
      expect(run.stderr).toContain('`sallyport credential add <name> chat|read|full` prints one')
      const before = unauthorized()
      await expect(useHttpEntry(httpEntry(client, JSON.parse(run.stdout)))).rejects.toThrow()
      await expectRefused(before)
      const key = await credentialAdd(`${client}-later`, 'chat')
      const { tools, catalog } = await useHttpEntry(
        httpEntry(client, JSON.parse(run.stdout.replace(PLACEHOLDER, key))),
      )
      expect(tools).toEqual(CHAT_TOOLS)
      expect(catalog).toMatchObject({ principal: `${client}-later`, policy: 'chat' })
    },
    120_000,
  )

  it('vscode without --credential: the input reference is refused (401) until VS Code fills in the key', async () => {
    const run = succeeded(await sallyport('connect', 'vscode'))
    const config = JSON.parse(run.stdout) as { inputs: Array<Record<string, unknown>> }
    expect(config.inputs).toHaveLength(1)
    const input = config.inputs[0] as { type: string; id: string; password: boolean }
    expect(input).toMatchObject({ type: 'promptString', password: true })
    const entry = httpEntry('vscode', config)
    const reference = `\${input:${input.id}}`
    expect(entry.headers.Authorization).toBe(`Bearer ${reference}`)
    const before = unauthorized()
    await expect(useHttpEntry(entry)).rejects.toThrow()
    await expectRefused(before)
    // What VS Code does with the value typed into the input: put it where the reference is.
    const key = await credentialAdd('vscode-later', 'read')
    const filled = {
      ...entry,
      headers: { Authorization: entry.headers.Authorization?.replace(reference, key) ?? '' },
    }
    expect((await useHttpEntry(filled)).tools).toEqual(READ_TOOLS)
  }, 120_000)

  it('inspector --credential: the printed command line, split by a shell, lists the read tools', async () => {
    const run = succeeded(
      await sallyport('connect', 'inspector', '--credential', 'inspector-bot', '--policy', 'read'),
    )
    const key = onlyKey(run.stdout)
    expect(run.stdout.trim().split('\n')).toHaveLength(1)
    const words = shellWords(run.stdout)
    expect(words).toContain('--stored-auth-only')
    expect(words[words.indexOf('--cli') + 1]).toBe(gatewayUrl)
    const inspected = await runInspectorLine(run.stdout, [key])
    expect(inspected.code, inspected.stderr.slice(-1000)).toBe(0)
    const names = (JSON.parse(inspected.stdout) as { tools: Array<{ name: string }> }).tools.map(
      (t) => t.name,
    )
    expect(names.sort()).toEqual(READ_TOOLS)
  }, 120_000)

  it('inspector with the placeholder: ends with exit 3 (auth_required, no OAuth login) on a 401; works once replaced', async () => {
    const run = succeeded(await sallyport('connect', 'inspector'))
    expect(run.stdout).toContain(`"Authorization: Bearer ${PLACEHOLDER}"`)
    const before = unauthorized()
    // As if a person ran it (the Inspector's switch for "a browser may open"): without
    // --stored-auth-only it would now try an OAuth login (dynamic client registration) instead.
    const refused = await runInspectorLine(run.stdout, [], { MCP_AUTO_OPEN_ENABLED: 'true' })
    expect(refused.code, refused.stderr.slice(-1000)).toBe(3)
    expect(refused.stderr).toContain('"code":"auth_required"')
    expect(refused.stderr).not.toMatch(/Registration/i)
    expect(refused.stdout).not.toContain('"tools"')
    await expectRefused(before)
    const key = await credentialAdd('inspector-later', 'chat')
    const inspected = await runInspectorLine(run.stdout.replace(PLACEHOLDER, key), [key])
    expect(inspected.code, inspected.stderr.slice(-1000)).toBe(0)
    const names = (JSON.parse(inspected.stdout) as { tools: Array<{ name: string }> }).tools.map(
      (t) => t.name,
    )
    expect(names.sort()).toEqual(CHAT_TOOLS)
  }, 120_000)

  it('mcp-remote --credential: spawned with exactly the printed args and env, lists the full tools over stdio', async () => {
    const run = succeeded(
      await sallyport('connect', 'mcp-remote', '--credential', 'remote-bot', '--policy', 'full'),
    )
    const key = onlyKey(run.stdout)
    const entry = (JSON.parse(run.stdout) as { mcpServers: { sallyport: StdioEntry } }).mcpServers.sallyport
    expect(Object.keys(entry).sort()).toEqual(['args', 'command', 'env'])
    expect(entry.args).toContain(gatewayUrl)
    // The documented form for clients that do not escape spaces in args: none in any argument.
    expect(entry.args.filter((arg) => arg.includes(' '))).toEqual([])
    expect(entry.args.join(' ')).not.toContain(key)
    expect(entry.env).toEqual({ AUTH_HEADER: `Bearer ${key}` })
    const { tools, catalog } = await useStdioEntry(entry)
    expect(tools).toEqual(FULL_TOOLS)
    expect(catalog).toMatchObject({ principal: 'remote-bot', policy: 'full' })
  }, 120_000)

  it('mcp-remote with the placeholder: refused (401), it lists nothing; works once replaced', async () => {
    const run = succeeded(await sallyport('connect', 'mcp-remote'))
    expect(run.stdout).toContain(`"AUTH_HEADER": "Bearer ${PLACEHOLDER}"`)
    const entry = (JSON.parse(run.stdout) as { mcpServers: { sallyport: StdioEntry } }).mcpServers.sallyport
    const before = unauthorized()
    await expect(useStdioEntry(entry)).rejects.toThrow()
    await expectRefused(before)
    const key = await credentialAdd('remote-later', 'chat')
    const replaced = (
      JSON.parse(run.stdout.replace(PLACEHOLDER, key)) as { mcpServers: { sallyport: StdioEntry } }
    ).mcpServers.sallyport
    expect((await useStdioEntry(replaced)).tools).toEqual(CHAT_TOOLS)
  }, 120_000)

  it('--credential with a name that exists: exit 5, nothing on stdout, no key anywhere, the credential unchanged', async () => {
    const keyFile = join(dir, 'state/credentials/desktop-bot/key')
    const before = await readFile(keyFile, 'utf8')
    const run = await sallyport('connect', 'cursor', '--credential', 'desktop-bot', '--policy', 'chat')
    expect(run.code).toBe(5)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(/^sallyport: .*already exists\n$/)
    expect(run.stderr).not.toMatch(KEY_PATTERN)
    expect(await readFile(keyFile, 'utf8')).toBe(before)
    const listed = JSON.parse(succeeded(await sallyport('credential', 'list', '--json')).stdout) as {
      credentials: Array<{ username: string; policy: string }>
    }
    expect(listed.credentials.filter((c) => c.username === 'desktop-bot')).toEqual([
      expect.objectContaining({ policy: 'full' }),
    ])
  }, 60_000)

  it('the pinned client versions are the installed ones the tests ran', async () => {
    const inspector = succeeded(await sallyport('connect', 'inspector')).stdout
    expect(inspector).toContain(` @modelcontextprotocol/inspector@${INSPECTOR_VERSION} `)
    const remote = JSON.parse(succeeded(await sallyport('connect', 'mcp-remote')).stdout)
    expect(remote.mcpServers.sallyport.args[1]).toBe(`mcp-remote@${MCP_REMOTE_VERSION}`)
  }, 60_000)

  it('the gateway never logged a key it was shown', () => {
    expect(seenKeys.length).toBeGreaterThanOrEqual(9)
    for (const key of seenKeys) expect(serveOutput.includes(key)).toBe(false)
  })
})
