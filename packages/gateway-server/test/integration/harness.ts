import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { createCredentialStore } from '@sallyport/credentials'
import { createHandleCodec, createOwnershipSigner, type HandleKind } from '@sallyport/handles'
import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import { createFakeRuntime, type FakeRuntime, type FakeTurn } from '@sallyport/upstream-client/testing'
import { setupServer } from 'msw/node'
import { afterAll, beforeAll, expect } from 'vitest'
import {
  createGateway,
  type Gateway,
  type GatewayOptions,
  runtimeFromUpstream,
  type ScreeningHook,
  type ScreeningInput,
} from '../../src/index.js'
import { type Credentials, captureLogger, makeCredentials, testSecret } from '../helpers.js'

// msw-mocked integration harness: the in-memory fake runtime of `@sallyport/upstream-client/testing`
// behind msw (`onUnhandledRequest: 'error'`), the REAL upstream client and adapter, the real
// gateway, and a real MCP SDK v2 client. The MCP client talks to `gateway.fetch` through the
// transport's `fetch` option, so its traffic never reaches msw (which patches global fetch).

export type Who = 'full' | 'read' | 'chat' | 'chat2'
export const POLICIES = ['chat', 'read', 'full'] as const
export type PolicyName = (typeof POLICIES)[number]
/** The credential used for each policy (chat2 is the second chat credential). */
export const WHO: Record<PolicyName, Who> = { chat: 'chat', read: 'read', full: 'full' }
export const AGENT_OF: Record<PolicyName, string> = {
  chat: 'remote',
  read: 'remote-read',
  full: 'remote-full',
}

/** A distinctive runtime password, so a leak is easy to spot in any body or log line. */
export const RUNTIME_PASSWORD = 'rt-Basic-S3cret-pa55word-7f3a9c'
export const RUNTIME_USERNAME = 'opencode'
export const BASIC_TOKEN = Buffer.from(`${RUNTIME_USERNAME}:${RUNTIME_PASSWORD}`).toString('base64')

/** Words the test screening hook reacts to. */
export const BLOCKED_WORD = 'zz-forbidden-zz'
export const THROW_WORD = 'zz-screen-throws-zz'
export const UNAVAILABLE_WORD = 'zz-screen-down-zz'

/**
 * The scripted "model": what a turn does depends on markers in its message.
 * `[complete]` answers at once (with diffs and todos), `[fail]` fails, `[permission]` asks a
 * permission, `[question]` asks a question; anything else keeps running until a test drives it.
 */
export const MARK = {
  complete: '[complete]',
  fail: '[fail]',
  permission: '[permission]',
  question: '[question]',
} as const

/** The final answer of a `[complete]` turn names its message, so older jobs are told apart. */
export const completeText = (message: string): string => `Done: ${message}`
export const COMPLETE_DIFFS = [{ file: 'src/app.ts', status: 'modified', additions: 3, deletions: 1 }]
export const COMPLETE_TODOS = [
  { content: 'fix the build', status: 'completed', priority: 'high' },
  { content: 'write the changelog', status: 'pending', priority: 'low' },
]
export const FAIL_MESSAGE = 'The model rejected the request'

function script(turn: FakeTurn, rt: FakeRuntime): void {
  if (turn.text.includes(MARK.complete)) {
    rt.completeTurn(turn.sessionId, completeText(turn.text), {
      diffs: COMPLETE_DIFFS.map((d) => ({ ...d, path: d.file, patch: '@@ -1 +1 @@' })) as never,
      todos: COMPLETE_TODOS,
    })
  } else if (turn.text.includes(MARK.fail)) {
    rt.failTurn(turn.sessionId, { name: 'APIError', message: FAIL_MESSAGE, statusCode: 400 })
  } else if (turn.text.includes(MARK.permission)) {
    rt.askPermission(turn.sessionId, { permission: 'bash', patterns: ['rm -rf build'] })
  } else if (turn.text.includes(MARK.question)) {
    rt.askQuestion(turn.sessionId)
  }
}

/** The outcome of one tools/call as a client sees it. */
export type CallOutcome =
  | {
      kind: 'result'
      isError: boolean
      structured: Record<string, unknown> | undefined
      text: string
      /** The `{ error: { code, message } }` body of an isError result, when it parses. */
      error: { code: string; message: string } | undefined
    }
  | { kind: 'rpc-error'; code: number; message: string }

export interface ReadOutcome {
  ok: boolean
  text?: string
  mimeType?: string
  uri?: string
  error?: { code: number; message: string; data?: unknown }
}

export interface McpSession {
  readonly who: Who
  readonly client: Client
  call(name: string, args?: Record<string, unknown>): Promise<CallOutcome>
  /** Calls a tool that must succeed and returns its structured content. */
  ok(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>
  /** Calls a tool that must fail with a gateway error body and returns the code. */
  errorCode(name: string, args?: Record<string, unknown>): Promise<string>
  read(uri: string): Promise<ReadOutcome>
  close(): Promise<void>
}

/** The answer a client's dialog gives to one form of an `input_required` round. */
export type FormAnswer =
  | { action: 'accept'; content?: Record<string, unknown> }
  | { action: 'decline' | 'cancel' }

/** One form a client was asked to show. */
export interface FormAsked {
  message: string
  requestedSchema: { properties: Record<string, Record<string, unknown>>; required?: string[] }
}

export interface ConnectOptions {
  gateway?: Gateway
  mode?: 'auto' | 'legacy'
  /**
   * Declares form elicitation and answers every form with this (MCP 2026-07-28 rounds are then
   * fulfilled by the SDK client and retried automatically).
   */
  elicit?: (form: FormAsked) => FormAnswer | Promise<FormAnswer>
  /** Declares form elicitation but fulfils nothing: `input_required` answers come back as they are. */
  manual?: boolean
}

export interface Harness {
  fake: FakeRuntime
  server: ReturnType<typeof setupServer>
  creds: Credentials
  secret: Uint8Array
  gateway: Gateway
  upstream: UpstreamClient
  /** Every response body the gateway sent to an MCP client of this file. */
  bodies: string[]
  logs: ReturnType<typeof captureLogger>
  /** Every input the screening hook saw. */
  screened: ScreeningInput[]
  /** Every turn the fake runtime started. */
  turns: FakeTurn[]
  identity: Record<Who, string>
  clients: Record<Who, McpSession>
  connect(who: Who, options?: ConnectOptions): Promise<McpSession>
  /** Another gateway on the same fake, secret and credentials (e.g. a client with another timeout). */
  extraGateway(options: {
    upstream?: Partial<Parameters<typeof createUpstreamClient>[0]>
    gateway?: Partial<GatewayOptions>
  }): Gateway
  /** Seals a handle as the gateway would for `who` (tests only: crafted and foreign handles). */
  seal(kind: HandleKind, who: Who, payload: Record<string, unknown>): Promise<string>
  /** Opens a handle `who` received, to learn the upstream ids behind it. */
  open(kind: HandleKind, who: Who, handle: string): Promise<Record<string, unknown>>
  /** The upstream session id behind a session handle of `who`. */
  sessionId(who: Who, handle: string): Promise<string>
  /** Verifies an ownership record as the gateway does. */
  verifyOwner(sessionId: string, who: Who, record: unknown): Promise<boolean>
  /** Adds a session straight to the fake with a valid ownership record of `who` (seeding). */
  seedOwned(who: Who, input?: { title?: string; parentID?: string }): Promise<string>
  /** Fake requests (method + path) since `mark`. */
  requestsSince(mark: number): Array<{ method: string; path: string }>
  /** Every upstream id the fake ever minted (sessions, messages, asks). */
  upstreamIds(): string[]
}

const testScreening = (screened: ScreeningInput[]): ScreeningHook => ({
  async screen(input) {
    screened.push(input)
    if (input.text.includes(THROW_WORD)) throw new Error('moderator crashed')
    if (input.text.includes(UNAVAILABLE_WORD)) return { allowed: false, reason: 'unavailable' }
    if (input.text.includes(BLOCKED_WORD)) return { allowed: false, reason: 'blocked' }
    return { allowed: true }
  },
})

/**
 * Sets up one fake runtime, msw server, credential store, gateway and one MCP client per
 * credential for the calling test file (beforeAll/afterAll). Read the fields inside tests.
 */
export function useHarness(options: { now?: () => number } = {}): Harness {
  const h = {} as Harness
  const gateways: Gateway[] = []
  const upstreams: UpstreamClient[] = []
  const sessions: McpSession[] = []

  beforeAll(async () => {
    const turns: FakeTurn[] = []
    h.turns = turns
    h.fake = createFakeRuntime({
      username: RUNTIME_USERNAME,
      password: RUNTIME_PASSWORD,
      ...(options.now && { now: options.now }),
      onTurn(turn, rt) {
        turns.push(turn)
        script(turn, rt)
      },
    })
    h.server = setupServer(...h.fake.handlers)
    h.server.listen({ onUnhandledRequest: 'error' })
    h.creds = await makeCredentials()
    h.secret = testSecret()
    h.bodies = []
    h.screened = []
    h.logs = captureLogger()
    const codec = createHandleCodec({ secret: h.secret })
    const signer = createOwnershipSigner({ secret: h.secret })
    const store = createCredentialStore({ stateDir: h.creds.stateDir })
    const idOf = async (username: string) => {
      const info = await store.get(username)
      return (info as { identity: string }).identity
    }
    h.identity = {
      full: await idOf('owner'),
      read: await idOf('reader'),
      chat: await idOf('discord'),
      chat2: await idOf('slack'),
    }

    h.extraGateway = ({ upstream = {}, gateway = {} }) => {
      const client = createUpstreamClient({ ...h.fake.clientOptions, ...upstream })
      upstreams.push(client)
      const g = createGateway({
        keys: h.creds.resolver,
        handleSecret: h.secret,
        runtime: runtimeFromUpstream(client),
        workspaceRoot: h.creds.workspace,
        screening: testScreening(h.screened),
        logger: h.logs.logger,
        ...gateway,
      })
      gateways.push(g)
      return g
    }
    h.upstream = createUpstreamClient(h.fake.clientOptions)
    upstreams.push(h.upstream)
    h.gateway = createGateway({
      keys: h.creds.resolver,
      handleSecret: h.secret,
      runtime: runtimeFromUpstream(h.upstream),
      workspaceRoot: h.creds.workspace,
      screening: testScreening(h.screened),
      logger: h.logs.logger,
      // The fake's runs go on until a test ends them, and one file starts dozens per credential
      // and makes dozens of calls at once: the run and call limits are tested on gateways of
      // their own (audit-limits.test.ts).
      limits: { concurrentRuns: 1_000, runsPerMinute: 1_000_000, runBurst: 10_000, concurrentCalls: 1_000 },
    })
    gateways.push(h.gateway)

    h.connect = async (who, { gateway = h.gateway, mode = 'auto', elicit, manual } = {}) => {
      const key = h.creds.keys[who]
      const fetchGateway = async (url: string | URL, init?: RequestInit): Promise<Response> => {
        const res = await gateway.fetch(new Request(url, init))
        if (!res.body) return res
        const text = await res.text()
        h.bodies.push(text)
        return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers })
      }
      const forms = elicit !== undefined || manual === true
      const client = new Client(
        { name: `it-${who}`, version: '1.0.0' },
        {
          versionNegotiation: { mode },
          ...(forms && { capabilities: { elicitation: { form: {} } } }),
          ...(manual && { inputRequired: { autoFulfill: false } }),
        },
      )
      if (elicit)
        client.setRequestHandler('elicitation/create', async (request) => {
          const params = request.params as unknown as FormAsked
          return (await elicit(params)) as never
        })
      else if (manual) client.setRequestHandler('elicitation/create', async () => ({ action: 'cancel' }))
      const transport = new StreamableHTTPClientTransport(new URL('http://gateway.test/mcp'), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
        fetch: fetchGateway,
      })
      await client.connect(transport)
      const session = wrap(who, client)
      sessions.push(session)
      return session
    }
    h.seal = (kind, who, payload) => codec.seal(kind, h.identity[who], payload)
    h.open = (kind, who, handle) => codec.open(kind, h.identity[who], handle)
    h.sessionId = async (who, handle) => String((await h.open('session', who, handle)).s)
    h.verifyOwner = (sessionId, who, record) => signer.verify(sessionId, h.identity[who], record)
    h.seedOwned = async (who, input = {}) => {
      const session = h.fake.addSession(input)
      const record = await signer.sign(session.id, h.identity[who])
      h.fake.state.sessions.set(session.id, { ...session, metadata: { sallyport: record } })
      return session.id
    }
    h.requestsSince = (mark) => h.fake.requests.slice(mark).map(({ method, path }) => ({ method, path }))
    h.upstreamIds = () => {
      const ids = new Set<string>()
      for (const [id, messages] of h.fake.state.messages) {
        ids.add(id)
        for (const m of messages) ids.add(m.info.id)
      }
      for (const event of h.fake.events) {
        const p = event.properties as Record<string, unknown>
        for (const key of ['sessionID', 'id', 'requestID'])
          if (typeof p[key] === 'string') ids.add(p[key] as string)
        const info = p.info as { id?: unknown } | undefined
        if (typeof info?.id === 'string') ids.add(info.id)
      }
      return [...ids].filter((id) => /^(ses|msg|per|que)_/.test(id))
    }
    // One after the other: the key resolver's first (cold) load is not shared with concurrent
    // callers, so parallel first requests get 503 (catalog.test.ts, 'a freshly started gateway').
    const full = await h.connect('full')
    const read = await h.connect('read')
    const chat = await h.connect('chat')
    const chat2 = await h.connect('chat2')
    h.clients = { full, read, chat, chat2 }
  })

  afterAll(async () => {
    for (const s of sessions) await s.close().catch(() => undefined)
    for (const g of gateways) await g.close()
    for (const u of upstreams) u.close()
    h.server?.close()
    await h.creds?.cleanup()
  })
  return h
}

function parseErrorBody(text: string): { code: string; message: string } | undefined {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }
    if (typeof body.error?.code === 'string' && typeof body.error.message === 'string')
      return { code: body.error.code, message: body.error.message }
  } catch {
    // not a gateway error body
  }
  return undefined
}

function wrap(who: Who, client: Client): McpSession {
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<CallOutcome> => {
    try {
      const result = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean
        structuredContent?: Record<string, unknown>
        content?: Array<{ type: string; text?: string }>
      }
      const text = (result.content ?? [])
        .filter((c) => c.type === 'text')
        .map((c) => c.text ?? '')
        .join('')
      const isError = result.isError === true
      return {
        kind: 'result',
        isError,
        structured: result.structuredContent,
        text,
        error: isError ? parseErrorBody(text) : undefined,
      }
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown }
      if (typeof e.code !== 'number') throw error
      return { kind: 'rpc-error', code: e.code, message: String(e.message) }
    }
  }
  return {
    who,
    client,
    call,
    async ok(name, args) {
      const out = await call(name, args)
      if (out.kind !== 'result' || out.isError || !out.structured)
        throw new Error(`${name} failed: ${JSON.stringify(out)}`)
      // Every success also carries its structured result serialised as JSON text (MCP: a tool
      // with an output schema SHOULD), for clients that read only the text content.
      if (JSON.stringify(JSON.parse(out.text)) !== JSON.stringify(out.structured))
        throw new Error(`${name}: the text content is not the structured result as JSON`)
      return out.structured
    },
    async errorCode(name, args) {
      const out = await call(name, args)
      if (out.kind !== 'result' || !out.isError || !out.error)
        throw new Error(`${name} did not fail with a gateway error: ${JSON.stringify(out)}`)
      return out.error.code
    },
    async read(uri) {
      try {
        const result = await client.readResource({ uri })
        const first = result.contents[0] as { text?: string; mimeType?: string; uri?: string } | undefined
        return {
          ok: true,
          ...(first?.text !== undefined && { text: first.text }),
          ...(first?.mimeType !== undefined && { mimeType: first.mimeType }),
          ...(first?.uri !== undefined && { uri: first.uri }),
        }
      } catch (error) {
        const e = error as { code?: unknown; message?: unknown; data?: unknown }
        if (typeof e.code !== 'number') throw error
        return { ok: false, error: { code: e.code, message: String(e.message), data: e.data } }
      }
    },
    close: () => client.close(),
  }
}

/** POSTs one raw JSON-RPC body (a batch is an array) to `gateway` as a 2025-era client. */
export async function postRpc(
  gateway: Gateway,
  key: string,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const res = await gateway.fetch(
    new Request('http://gateway.test/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify(body),
    }),
  )
  return { status: res.status, text: await res.text() }
}

/** A JSON-RPC `tools/call` message. */
export const rpcCall = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
})

/** The audit lines `h` logged since line `mark` (`h.logs.lines().length` taken before). */
export const auditLinesSince = (h: Harness, mark: number): Array<Record<string, unknown>> =>
  h.logs
    .lines()
    .slice(mark)
    .filter((l) => l.event === 'audit')

/** Polls `check` until it returns a value other than undefined, or fails at the deadline. */
export async function pollUntil<T>(
  check: () => T | undefined | Promise<T | undefined>,
  { timeoutMs = 5_000, what = 'condition' }: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * Asserts that nothing the gateway sent to a client, nor any log line, carries an upstream id
 * the fake minted, the runtime's password or its Basic token.
 */
export function expectNoLeaks(h: Harness): void {
  const sent = h.bodies.join('\n')
  const logged = h.logs.raw()
  const ids = h.upstreamIds()
  expect(ids.length).toBeGreaterThan(0)
  expect(sent.length).toBeGreaterThan(0)
  for (const text of [sent, logged]) {
    expect(text).not.toContain(RUNTIME_PASSWORD)
    expect(text).not.toContain(BASIC_TOKEN)
    for (const id of ids) expect(text).not.toContain(id)
  }
  // Logs never carry bearer keys, handles or message text either.
  for (const key of Object.values(h.creds.keys)) expect(logged).not.toContain(key)
  const handles = new Set(sent.match(/v1\.[A-Za-z0-9_-]{40,}/g) ?? [])
  expect(handles.size).toBeGreaterThan(0)
  for (const handle of handles) expect(logged).not.toContain(handle)
  for (const marker of [...Object.values(MARK), BLOCKED_WORD, THROW_WORD])
    expect(logged).not.toContain(marker)
}

/** Flips one character in the middle of a handle (still handle-shaped). */
export function tamper(handle: string): string {
  const i = Math.floor(handle.length / 2)
  const c = handle[i] === 'A' ? 'B' : 'A'
  return handle.slice(0, i) + c + handle.slice(i + 1)
}

/** A small workspace: source files, a secret `.env`, a large file and a binary file. */
export async function writeWorkspace(root: string): Promise<void> {
  await mkdir(join(root, 'src', 'lib'), { recursive: true })
  await writeFile(join(root, 'README.md'), '# Demo\n\nThe needle is in src/app.ts.\n')
  await writeFile(
    join(root, 'src', 'app.ts'),
    'export function computeTotal(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0) // needle\n}\n',
  )
  await writeFile(join(root, 'src', 'lib', 'util.ts'), 'export const needleCount = 3\n')
  await writeFile(join(root, '.env'), 'API_TOKEN=needle-secret-value\n')
  await writeFile(join(root, '.env.example'), 'API_TOKEN=\n')
  await writeFile(join(root, 'big.txt'), 'a'.repeat(256 * 1024 + 1))
  await writeFile(join(root, 'image.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x00]))
}
