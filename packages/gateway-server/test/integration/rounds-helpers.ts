import type { Client } from '@modelcontextprotocol/client'
import { expect } from 'vitest'
import type { FormAnswer, FormAsked, Harness, McpSession, Who } from './harness.js'

// Helpers of the input_required round tests (input-rounds*.test.ts), bound to one harness.

export interface Round {
  requestState: string
  inputRequests: Record<string, { method: string; params: FormAsked & { message: string } }>
  _meta?: Record<string, unknown>
}

/** One call through a client that fulfils nothing: the round it got (or the complete result). */
export async function callRaw(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  retry?: { requestState?: string; inputResponses?: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  return (await client.callTool(
    { name, arguments: args, ...retry } as never,
    {
      allowInputRequired: true,
    } as never,
  )) as Record<string, unknown>
}

/** The gateway error code of an isError result, or undefined for a success. */
export const errorOf = (result: Record<string, unknown>): string | undefined => {
  if (result.isError !== true) return undefined
  const text = (result.content as Array<{ text: string }>)[0]?.text ?? ''
  return (JSON.parse(text) as { error: { code: string } }).error.code
}

const QUESTION_REPLY = /^\/question\/[^/]+\/reply$/
const PERMISSION_REPLY = /^\/permission\/[^/]+\/reply$/

export function roundHelpers(h: Harness) {
  /** Replies (and rejections) the fake runtime received since `mark`. */
  const replies = (mark: number) =>
    h.requestsSince(mark).filter((r) => r.method === 'POST' && /^\/(permission|question)\//.test(r.path))

  /** The properties of the newest runtime event of `type`. */
  function lastReply(type: 'question.replied' | 'permission.replied'): Record<string, unknown> {
    const event = h.fake.events.filter((e) => e.type === type).at(-1)
    if (!event) throw new Error(`no ${type} event`)
    return event.properties as Record<string, unknown>
  }

  /** Completes the turn of the session whose ask was just answered, as the model would go on. */
  function completeAfterReply(text: string): () => void {
    const listener = ({ request }: { request: Request }) => {
      const path = new URL(request.url).pathname
      if (request.method !== 'POST' || !(QUESTION_REPLY.test(path) || PERMISSION_REPLY.test(path))) return
      const replied = [...h.fake.events]
        .reverse()
        .find((e) => e.type === 'question.replied' || e.type === 'permission.replied')
      const sessionId = (replied?.properties as { sessionID?: string } | undefined)?.sessionID
      if (sessionId && h.fake.runningTurn(sessionId)) h.fake.completeTurn(sessionId, text)
    }
    h.server.events.on('response:mocked', listener)
    return () => h.server.events.removeListener('response:mocked', listener)
  }

  /** A client whose dialogs answer from `answers` in order (the last one repeats); records the forms. */
  async function dialogs(
    who: Who,
    ...answers: FormAnswer[]
  ): Promise<{ session: McpSession; forms: FormAsked[] }> {
    const forms: FormAsked[] = []
    const session = await h.connect(who, {
      elicit: (form) => {
        forms.push(form)
        return answers[Math.min(forms.length - 1, answers.length - 1)] as FormAnswer
      },
    })
    return { session, forms }
  }

  /** A manual client's first round of an agent.run with `marker`. */
  async function roundOf(who: Who, marker: string, waitMs = 5_000) {
    const manual = await h.connect(who, { manual: true })
    const args = { message: `please ${marker}`, waitMs }
    const round = (await callRaw(manual.client, 'gateway.agent.run', args)) as unknown as Round
    expect(round.requestState).toMatch(/^v1\./)
    return { client: manual.client, args, round }
  }

  /** The audit lines of tools/call so far. */
  const auditLines = () =>
    h.logs
      .raw()
      .split('\n')
      .filter((l) => l.includes('"event":"audit"') && l.includes('"tools/call"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)

  return { replies, lastReply, completeAfterReply, dialogs, roundOf, auditLines }
}
