import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { step } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  connectTo,
  type E2E,
  errorCode,
  type FormAnswer,
  type FormAsked,
  type McpSession,
  startE2E,
} from './harness.js'

// Agent questions and permission requests as the client's own dialogs (MCP 2026-07-28 multi
// round-trip requests), end to end: the official v2 client with an elicitation handler → the
// gateway → the real runtime and the scripted model. One logical call asks, is answered, and
// finishes; a bad requestState is refused; 2025-era clients and clients without the capability
// keep the polling flow.

let e2e: E2E
/** What each dialog answers, set by the test; every form shown is recorded. */
let answer: (form: FormAsked) => FormAnswer = () => ({ action: 'cancel' })
const forms: FormAsked[] = []
const elicit = (form: FormAsked): FormAnswer => {
  forms.push(form)
  return answer(form)
}
let full: McpSession
let chat: McpSession
let fullManual: McpSession
let chatManual: McpSession
let chat2Manual: McpSession

beforeAll(async () => {
  e2e = await startE2E()
  const { keys } = e2e.creds
  full = await e2e.connect(keys.full, 'auto', { elicit })
  chat = await e2e.connect(keys.chat, 'auto', { elicit })
  fullManual = await e2e.connect(keys.full, 'auto', { manual: true })
  chatManual = await e2e.connect(keys.chat, 'auto', { manual: true })
  chat2Manual = await e2e.connect(keys.chat2, 'auto', { manual: true })
}, 90_000)

afterAll(async () => {
  for (const c of [full, chat, fullManual, chatManual, chat2Manual]) await c?.close().catch(() => undefined)
  await e2e?.stop()
})

/** A scripted turn that asks "Which colour?" and then reports the answer it got. */
function colourQuestion(): string {
  return e2e.stack.model.script([
    step.question({
      question: 'Which colour?',
      header: 'Colour',
      options: [
        { label: 'Blue', description: 'cool' },
        { label: 'Red', description: 'warm' },
      ],
    }),
    (req) => ({ text: `the answer was ${/Blue|Red/.exec(req.toolResults.join(' '))?.[0] ?? 'none'}` }),
  ])
}

/** A scripted turn that runs a shell command (full asks for it), then says what it saw. */
function shellTurn(file: string): string {
  return e2e.stack.model.script([
    step.bash(`echo rounds > ${file}`, { description: 'write a file' }),
    (req) => ({ text: `shell said: ${req.toolResults.join(' ').trim().slice(0, 300) || 'nothing'}` }),
  ])
}

/** One call whose client fulfils nothing: the input_required result (or the complete one). */
async function raw(
  session: McpSession,
  args: Record<string, unknown>,
  retry?: { requestState: string; inputResponses: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  return (await session.client.callTool(
    { name: 'gateway.agent.run', arguments: args, ...retry } as never,
    {
      allowInputRequired: true,
    } as never,
  )) as Record<string, unknown>
}

const rawError = (result: Record<string, unknown>): string | undefined =>
  result.isError === true
    ? (
        JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? '{}') as {
          error: { code: string }
        }
      ).error.code
    : undefined

describe('questions', () => {
  it('question → native form → answer → completed, in one logical call', async () => {
    forms.length = 0
    answer = () => ({ action: 'accept', content: { answer: 'Blue' } })
    const run = await full.call('gateway.agent.run', {
      message: `ask me ${colourQuestion()}`,
      waitMs: 25_000,
    })
    expect(run.isError ? run.text : 'ok').toBe('ok')
    expect(run.structured).toMatchObject({ status: 'completed', text: 'the answer was Blue' })
    expect(forms).toHaveLength(1)
    expect(forms[0]?.message).toBe('Which colour?')
    expect(forms[0]?.requestedSchema.properties.answer).toMatchObject({
      oneOf: [
        { const: 'Blue', title: 'Blue: cool' },
        { const: 'Red', title: 'Red: warm' },
      ],
    })
  })

  it('a chat credential answers through the form too; a typed answer reaches the agent', async () => {
    answer = () => ({ action: 'accept', content: { custom: 'Red' } })
    const run = await chat.call('gateway.agent.run', { message: `ask ${colourQuestion()}`, waitMs: 25_000 })
    expect(run.structured).toMatchObject({ status: 'completed', text: 'the answer was Red' })
  })

  it('a cancelled dialog dismisses the question and the turn ends', async () => {
    answer = () => ({ action: 'cancel' })
    const run = await full.call('gateway.agent.run', { message: `ask ${colourQuestion()}`, waitMs: 25_000 })
    // The runtime ends the turn when its question is dismissed: nothing failed.
    expect(run.structured.status).toBe('completed')
  })
})

describe('permission requests (full)', () => {
  it('approve once: the command runs and the job completes in the same call', async () => {
    forms.length = 0
    answer = () => ({ action: 'accept', content: { decision: 'once' } })
    const file = 'rounds-once.txt'
    const run = await full.call('gateway.agent.run', { message: `go ${shellTurn(file)}`, waitMs: 25_000 })
    expect(run.structured).toMatchObject({ status: 'completed', text: 'shell said: (no output)' })
    expect(existsSync(join(e2e.stack.runtime.directory, file))).toBe(true)
    expect(forms[0]?.requestedSchema.properties.decision?.oneOf).toEqual([
      { const: 'once', title: 'Approve once' },
      { const: 'always', title: 'Approve always' },
      { const: 'reject', title: 'Reject' },
    ])
    expect(forms[0]?.message).toContain('bash')
  })

  it('reject with a note: the command never runs and the agent gets the note', async () => {
    answer = () => ({ action: 'accept', content: { decision: 'reject', message: 'not now' } })
    const file = 'rounds-rejected.txt'
    const run = await full.call('gateway.agent.run', { message: `go ${shellTurn(file)}`, waitMs: 25_000 })
    expect(run.structured.status).toBe('completed')
    expect(String(run.structured.text)).toContain('not now')
    expect(existsSync(join(e2e.stack.runtime.directory, file))).toBe(false)
  })
})

describe('requestState', () => {
  it('a tampered state is refused and answers nothing; the question stays pending', async () => {
    const args = { message: `ask ${colourQuestion()}`, waitMs: 25_000 }
    const round = await raw(fullManual, args)
    expect(round.resultType).toBe('input_required')
    const state = String(round.requestState)
    const i = Math.floor(state.length / 2)
    const tampered = state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1)
    const inputResponses = { 'q1.1': { action: 'accept', content: { answer: 'Blue' } } }
    expect(rawError(await raw(fullManual, args, { requestState: tampered, inputResponses }))).toBe(
      'not_found',
    )
    // The genuine state still answers it, once.
    const done = await raw(fullManual, args, { requestState: state, inputResponses })
    expect(done.structuredContent).toMatchObject({ status: 'completed', text: 'the answer was Blue' })
    expect(rawError(await raw(fullManual, args, { requestState: state, inputResponses }))).toBe('not_pending')
  })

  it("another credential's state is refused", async () => {
    const args = { message: `ask ${colourQuestion()}`, waitMs: 25_000 }
    const round = await raw(chatManual, args)
    const retry = {
      requestState: String(round.requestState),
      inputResponses: { 'q1.1': { action: 'accept', content: { answer: 'Red' } } },
    }
    expect(rawError(await raw(chat2Manual, args, retry))).toBe('not_found')
    expect(rawError(await raw(fullManual, args, retry))).toBe('not_found')
    const done = await raw(chatManual, args, retry)
    expect(done.structuredContent).toMatchObject({ status: 'completed', text: 'the answer was Red' })
  })

  it('the retry is served by another gateway that shares only the secret files', async () => {
    const other = await e2e.extraGateway({})
    const there = await connectTo(e2e, other.url, e2e.creds.keys.full, { manual: true })
    try {
      const args = { message: `ask ${colourQuestion()}`, waitMs: 25_000 }
      const round = await raw(fullManual, args)
      const done = await raw(there, args, {
        requestState: String(round.requestState),
        inputResponses: { 'q1.1': { action: 'accept', content: { answer: 'Blue' } } },
      })
      expect(done.structuredContent).toMatchObject({ status: 'completed', text: 'the answer was Blue' })
    } finally {
      await there.close()
      await other.close()
    }
  })
})

describe('the polling flow stays for everyone else', () => {
  it.each(['legacy', 'v1', 'auto'] as const)(
    'a %s client without dialogs sees input_required + interaction.respond',
    async (mode) => {
      const key = e2e.creds.keys.read
      const session = await e2e.connect(key, mode, mode === 'legacy' ? { elicit } : undefined)
      try {
        forms.length = 0
        const run = await session.call('gateway.agent.run', {
          message: `ask ${colourQuestion()}`,
          waitMs: 25_000,
        })
        expect(run.structured.status).toBe('input_required')
        expect(forms).toEqual([])
        const [q] = run.structured.interactions as Array<{ interaction: string }>
        const ok = await session.call('gateway.interaction.respond', {
          interaction: q?.interaction,
          answers: [['Red']],
        })
        expect(errorCode(ok)).toBeUndefined()
        const done = await session.call('gateway.job.get', { job: run.structured.job, waitMs: 25_000 })
        expect(done.structured).toMatchObject({ status: 'completed', text: 'the answer was Red' })
      } finally {
        await session.close()
      }
    },
  )
})
