import { type Stack, startStack } from '@sallyport/testkit'

/** Runtime options a suite may set (the model URL is the suite's own model server). */
type StackRuntimeOptions = NonNullable<NonNullable<Parameters<typeof startStack>[0]>['runtime']>

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import {
  createGateway,
  type Gateway,
  type GatewayOptions,
  gatewayUpstreamOptions,
  runtimeFromUpstream,
} from '../../src/index.js'
import { type Credentials, captureLogger, makeCredentials, testSecret } from '../helpers.js'

export type ClientMode = 'auto' | 'legacy' | 'v1'

/** One form an `input_required` round asks a client to show, and the dialog's answer to it. */
export interface FormAsked {
  message: string
  requestedSchema: { properties: Record<string, Record<string, unknown>>; required?: string[] }
}
export type FormAnswer =
  | { action: 'accept'; content?: Record<string, unknown> }
  | { action: 'decline' | 'cancel' }

/** A 2026-07-28 client that declares form elicitation: it answers forms (`elicit`) or fulfils nothing (`manual`). */
export type FormsOption = { elicit: (form: FormAsked) => FormAnswer | Promise<FormAnswer> } | { manual: true }

export interface ToolOutcome {
  isError: boolean
  structured: Record<string, unknown>
  text: string
}

export interface McpSession {
  /** The underlying client (a v1 client cast, for v1 sessions). */
  readonly client: Client
  call(name: string, args?: Record<string, unknown>): Promise<ToolOutcome>
  listTools(): Promise<string[]>
  listPrompts(): Promise<string[]>
  listResourceTemplates(): Promise<string[]>
  readResource(uri: string): Promise<{ text: string } | { error: { code: number; message: string } }>
  getPrompt(name: string, args: Record<string, string>): Promise<string>
  protocolVersion(): string | undefined
  close(): Promise<void>
}

export interface E2E {
  stack: Stack
  creds: Credentials
  upstream: UpstreamClient
  gateway: Gateway
  url: string
  secret: Uint8Array
  /** Every body the gateway sent to any client of this suite, for the upstream-id scan. */
  bodies: string[]
  /** The gateway's structured log so far (JSON lines). */
  logs: () => string
  connect(key: string, mode?: ClientMode, forms?: FormsOption): Promise<McpSession>
  extraGateway(options: Partial<GatewayOptions>): Promise<{ url: string; close(): Promise<void> }>
  stop(): Promise<void>
}

/** The real runtime + scripted model (testkit), the real gateway on port 0, real MCP clients. */
export async function startE2E(options: { runtime?: StackRuntimeOptions } = {}): Promise<E2E> {
  const creds = await makeCredentials()
  const stack = await startStack(options.runtime ? { runtime: options.runtime } : {})
  const upstream = createUpstreamClient({
    ...gatewayUpstreamOptions,
    baseUrl: stack.runtime.url,
    username: stack.runtime.username,
    password: stack.runtime.password,
    directory: stack.runtime.directory,
  })
  const secret = testSecret()
  const log = captureLogger()
  const base: GatewayOptions = {
    logger: log.logger,
    keys: creds.resolver,
    handleSecret: secret,
    runtime: runtimeFromUpstream(upstream),
    workspaceRoot: stack.runtime.directory,
    // These suites test other things than moderation and have no moderator runtime: everything
    // passes. test/e2e/moderation.test.ts runs the real screening against a real moderator.
    screening: { screen: async () => ({ allowed: true }) },
  }
  const gateway = createGateway(base)
  const server = await gateway.listen({ port: 0 })
  const bodies: string[] = []
  const extras: Array<() => Promise<void>> = []

  // A fetch that records every response body, so a test can prove no upstream id ever leaves.
  const recordingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    if (!res.body) return res
    const text = await res.text()
    bodies.push(text)
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers })
  }

  async function connect(
    key: string,
    mode: ClientMode = 'auto',
    url = server.url,
    forms?: FormsOption,
  ): Promise<McpSession> {
    const endpoint = new URL(`${url}/mcp`)
    const headers = { Authorization: `Bearer ${key}` }
    if (mode === 'v1') {
      const client = new V1Client({ name: 'e2e-v1', version: '1.0.0' })
      const transport = new V1Transport(endpoint, { requestInit: { headers }, fetch: recordingFetch })
      await client.connect(transport)
      return wrap(client as unknown as Client, () => transport.protocolVersion)
    }
    const client = formsClient(`e2e-${mode}`, mode, forms)
    const transport = new StreamableHTTPClientTransport(endpoint, {
      requestInit: { headers },
      fetch: recordingFetch,
    })
    await client.connect(transport)
    return wrap(client, () => client.getNegotiatedProtocolVersion())
  }

  return {
    stack,
    creds,
    upstream,
    gateway,
    url: server.url,
    secret,
    bodies,
    logs: log.raw,
    connect: (key, mode, forms) => connect(key, mode, server.url, forms),
    async extraGateway(options) {
      const g = createGateway({ ...base, ...options })
      const s = await g.listen({ port: 0 })
      extras.push(() => g.close())
      return { url: s.url, close: () => g.close() }
    },
    async stop() {
      for (const close of extras) await close()
      await gateway.close()
      upstream.close()
      await stack.stop()
      await creds.cleanup()
    },
  }
}

/** A v2 client in `mode`, declaring form elicitation when `forms` is given. */
function formsClient(name: string, mode: 'auto' | 'legacy', forms?: FormsOption): Client {
  const client = new Client(
    { name, version: '1.0.0' },
    {
      versionNegotiation: { mode },
      ...(forms && { capabilities: { elicitation: { form: {} } } }),
      ...(forms && 'manual' in forms && { inputRequired: { autoFulfill: false } }),
    },
  )
  if (forms)
    client.setRequestHandler('elicitation/create', async (request) =>
      'elicit' in forms
        ? ((await forms.elicit(request.params as unknown as FormAsked)) as never)
        : { action: 'cancel' },
    )
  return client
}

/** Connects a client to another gateway URL of the same suite. */
export async function connectTo(
  e2e: E2E,
  url: string,
  key: string,
  forms?: FormsOption,
): Promise<McpSession> {
  const client = formsClient('e2e-extra', 'auto', forms)
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  })
  await client.connect(transport)
  void e2e
  return wrap(client, () => client.getNegotiatedProtocolVersion())
}

function wrap(client: Client, version: () => string | undefined): McpSession {
  return {
    client,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean
        structuredContent?: Record<string, unknown>
        content?: Array<{ type: string; text?: string }>
      }
      const text = (result.content ?? []).map((c) => c.text ?? '').join('')
      let structured = result.structuredContent
      if (!structured && result.isError) {
        try {
          structured = JSON.parse(text) as Record<string, unknown>
        } catch {
          structured = { error: { code: 'unknown', message: text } }
        }
      }
      return { isError: result.isError === true, structured: structured ?? {}, text }
    },
    listTools: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
    listPrompts: async () => (await client.listPrompts()).prompts.map((p) => p.name).sort(),
    listResourceTemplates: async () =>
      (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort(),
    async readResource(uri) {
      try {
        const result = await client.readResource({ uri })
        const first = result.contents[0] as { text?: string } | undefined
        return { text: first?.text ?? '' }
      } catch (error) {
        const e = error as { code?: number; message?: string }
        return { error: { code: e.code ?? 0, message: e.message ?? '' } }
      }
    },
    async getPrompt(name, args) {
      const result = await client.getPrompt({ name, arguments: args })
      return result.messages.map((m) => (m.content as { text?: string }).text ?? '').join('\n')
    },
    protocolVersion: version,
    close: () => client.close(),
  }
}

/** The error code of a failed tool call. */
export const errorCode = (outcome: ToolOutcome): string | undefined =>
  (outcome.structured.error as { code?: string } | undefined)?.code
