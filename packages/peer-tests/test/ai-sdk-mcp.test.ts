import {
  type CallToolResult,
  createMCPClient,
  type ElicitationRequest,
  ElicitationRequestSchema,
  type ElicitResult,
  type MCPClient,
  type MCPClientCapabilities,
} from '@ai-sdk/mcp'
import { step } from '@sallyport/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type LogLine, type PeerGateway, startPeerGateway } from './harness.ts'

// The Vercel AI SDK's MCP client (`@ai-sdk/mcp`, its own JSON-RPC and HTTP code, no
// @modelcontextprotocol dependency) against the real gateway and runtime: an agent question
// becomes the client's own form dialog through the 2026-07-28 multi round-trip flow
// (`input_required` → `inputResponses` + `requestState`), a declined dialog dismisses it, and a
// client that declares no elicitation gets the polling flow instead.

let gw: PeerGateway
const clients: MCPClient[] = []

beforeAll(async () => {
  gw = await startPeerGateway()
})

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

afterAll(async () => {
  await gw?.stop()
})

type Dialog = (request: ElicitationRequest) => ElicitResult

/** A client on the full key; `dialog` answers the forms it is shown and every form is recorded. */
async function connect(
  capabilities: MCPClientCapabilities,
  dialog: Dialog = () => ({ action: 'cancel' }),
  options: { protocolVersionDiscovery?: boolean } = {},
): Promise<{ client: MCPClient; forms: ElicitationRequest['params'][] }> {
  const client = await createMCPClient({
    transport: { type: 'http', url: `${gw.url}/mcp`, headers: { Authorization: `Bearer ${gw.keys.full}` } },
    capabilities,
    clientName: 'sallyport-peer-ai-sdk',
    ...options,
  })
  clients.push(client)
  const forms: ElicitationRequest['params'][] = []
  client.onElicitationRequest(ElicitationRequestSchema, async (request) => {
    forms.push(request.params)
    return dialog(request)
  })
  return { client, forms }
}

const FORMS = { elicitation: { form: {} } } satisfies MCPClientCapabilities

/** A scripted turn: the runtime's `question` tool asks "Which colour?", then the model says what it got. */
function colourQuestion(): string {
  return gw.stack.model.script([
    step.question({
      question: 'Which colour?',
      header: 'Colour',
      options: [
        { label: 'Blue', description: 'cool' },
        { label: 'Red', description: 'warm' },
      ],
    }),
    (req) => ({ text: `answer was ${req.toolResults.join(' ').includes('Blue') ? 'Blue' : 'other'}` }),
  ])
}

const structured = (result: CallToolResult): Record<string, unknown> => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
  return (result as { structuredContent: Record<string, unknown> }).structuredContent
}

const countRpc = (method: string): number => gw.logs().filter((l) => l.rpcMethod === method).length

const callAudit = (): LogLine[] =>
  gw.logs().filter((l) => l.event === 'audit' && l.rpcMethod === 'tools/call')

const run = (client: MCPClient, marker: string) =>
  client.callTool({ name: 'gateway.agent.run', arguments: { message: `ask me ${marker}`, waitMs: 20_000 } })

describe('@ai-sdk/mcp 2.0.99 against the gateway', () => {
  it('speaks 2026-07-28: server/discover, no initialize', async () => {
    const before = { initialize: countRpc('initialize'), discover: countRpc('server/discover') }
    const { client } = await connect(FORMS)
    expect(client.initializeResult.protocolVersion).toBe('2026-07-28')
    expect(client.serverInfo.name).toBe('sallyport')
    const tools = await client.listTools()
    expect(tools.tools.map((t) => t.name)).toContain('gateway.agent.run')
    expect(countRpc('server/discover')).toBe(before.discover + 1)
    expect(countRpc('initialize')).toBe(before.initialize)
  })

  it('answers an agent question in its own form dialog and completes in one callTool', async () => {
    const { client, forms } = await connect(FORMS, () => ({ action: 'accept', content: { answer: 'Blue' } }))
    const result = await run(client, colourQuestion())
    expect(structured(result)).toMatchObject({ status: 'completed', text: 'answer was Blue' })
    expect(forms).toHaveLength(1)
    const [form] = forms as [ElicitationRequest['params']]
    expect(form.message).toBe('Which colour?')
    expect(form.mode).toBe('form')
    const { answer } = (form.requestedSchema as { properties: { answer: { oneOf: unknown[] } } }).properties
    expect(answer.oneOf).toEqual([
      { const: 'Blue', title: 'Blue: cool' },
      { const: 'Red', title: 'Red: warm' },
    ])
  }, 60_000)

  it('a declined dialog dismisses the question: the turn ends without the answer', async () => {
    const { client, forms } = await connect(FORMS, () => ({ action: 'decline' }))
    const marker = colourQuestion()
    const before = callAudit().length
    const result = await run(client, marker)
    const job = structured(result)
    expect(forms).toHaveLength(1)
    // The runtime's question tool fails on the dismissal and the turn ends there: completed, with
    // no text, and the model was never asked for the step after the question.
    expect(job).toMatchObject({ status: 'completed', text: '' })
    expect(gw.stack.model.requestsFor(marker)).toHaveLength(1)
    const rounds = callAudit().slice(before)
    expect(rounds.map((l) => [l.inputRound, l.inputAsked, l.inputAnswered, l.inputDeclined])).toEqual([
      [0, 1, undefined, undefined],
      [1, undefined, 0, 1],
    ])
  }, 60_000)

  it('without the elicitation capability gets the polling flow: input_required, respond, job.get', async () => {
    const { client, forms } = await connect({}, () => ({ action: 'accept', content: { answer: 'Red' } }))
    expect(client.initializeResult.protocolVersion).toBe('2026-07-28')
    const first = structured(await run(client, colourQuestion()))
    expect(first.status).toBe('input_required')
    const interactions = first.interactions as Array<{
      kind: string
      interaction: string
      questions: Array<{ question: string }>
    }>
    expect(interactions).toHaveLength(1)
    const [q] = interactions
    expect(q?.kind).toBe('question')
    expect(q?.questions[0]?.question).toBe('Which colour?')
    const respond = structured(
      await client.callTool({
        name: 'gateway.interaction.respond',
        arguments: { interaction: q?.interaction, answers: [['Blue']] },
      }),
    )
    expect(respond).toEqual({ accepted: true, kind: 'question' })
    const done = structured(
      await client.callTool({ name: 'gateway.job.get', arguments: { job: first.job, waitMs: 20_000 } }),
    )
    expect(done).toMatchObject({ status: 'completed', text: 'answer was Blue' })
    // The handler is registered, but the gateway never asked a client that declared no forms.
    expect(forms).toHaveLength(0)
  }, 60_000)

  it('the audit log shows the two rounds of the one call: asked, then answered', async () => {
    const { client } = await connect(FORMS, () => ({ action: 'accept', content: { answer: 'Blue' } }))
    const before = callAudit().length
    const result = await run(client, colourQuestion())
    expect(structured(result).status).toBe('completed')
    const rounds = callAudit().slice(before)
    expect(rounds.map((l) => [l.tool, l.inputRound, l.inputAsked, l.inputAnswered, l.outcome])).toEqual([
      ['gateway.agent.run', 0, 1, undefined, 'ok'],
      ['gateway.agent.run', 1, undefined, 1, 'ok'],
    ])
    expect(new Set(rounds.map((l) => l.requestId)).size).toBe(2)
    expect(rounds.every((l) => l.username === 'owner')).toBe(true)
  }, 60_000)

  it('an empty form ends the dialogs: the plain status comes back as an ordinary result', async () => {
    const { client, forms } = await connect(FORMS, () => ({ action: 'accept', content: {} }))
    const job = structured(await run(client, colourQuestion()))
    expect(forms).toHaveLength(1)
    expect(forms[0]?.message).toBe('Which colour?')
    // The plain polling status comes back as an ordinary result, not as an error of the library.
    expect(job.status).toBe('input_required')
    expect(job.interactions as unknown[]).toHaveLength(1)
  }, 60_000)

  it('a 2025-11-25 client (no discovery) that declares forms gets the polling flow, never a form', async () => {
    const before = countRpc('initialize')
    const { client, forms } = await connect(
      FORMS,
      () => ({ action: 'accept', content: { answer: 'Blue' } }),
      {
        protocolVersionDiscovery: false,
      },
    )
    expect(client.initializeResult.protocolVersion).toBe('2025-11-25')
    expect(countRpc('initialize')).toBe(before + 1)
    const job = structured(await run(client, colourQuestion()))
    expect(job.status).toBe('input_required')
    expect(job.interactions as unknown[]).toHaveLength(1)
    expect(forms).toHaveLength(0)
  }, 60_000)

  it('a dialog that throws rejects the call; no answer is sent, the question stays open', async () => {
    const { client, forms } = await connect(FORMS, () => {
      throw new Error('dialog crashed')
    })
    const before = callAudit().length
    const error = await run(client, colourQuestion()).then(
      () => undefined,
      (e: unknown) => e as Error & { cause?: unknown },
    )
    expect(error?.name).toBe('MCPClientError')
    expect(error?.message).toBe('Failed to process server response')
    expect((error?.cause as Error | undefined)?.message).toBe('dialog crashed')
    expect(forms).toHaveLength(1)
    // Only the first round reached the gateway: the library sent no retry after the crash.
    expect(
      callAudit()
        .slice(before)
        .map((l) => [l.inputRound, l.inputAsked]),
    ).toEqual([[0, 1]])
    // The question is still open: the session's active job waits for it (the polling flow).
    const list = structured(await client.callTool({ name: 'gateway.session.list', arguments: { limit: 1 } }))
    const [newest] = list.sessions as Array<{ session: string }>
    const view = structured(
      await client.callTool({ name: 'gateway.session.get', arguments: { session: newest?.session } }),
    )
    const job = structured(
      await client.callTool({ name: 'gateway.job.get', arguments: { job: view.activeJob } }),
    )
    expect(job.status).toBe('input_required')
  }, 60_000)
})
