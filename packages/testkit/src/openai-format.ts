import { randomUUID } from 'node:crypto'
import type { ScriptToolCall } from './script-steps.ts'

/** Token usage reported with every answer (fixed numbers; tests should not depend on them). */
export const FAKE_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } as const

export type FinishReason = 'stop' | 'tool_calls'

/** A tool call in the OpenAI wire format, with a generated id when the script gave none. */
export interface WireToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export function toWireToolCalls(calls: readonly ScriptToolCall[]): WireToolCall[] {
  return calls.map((call) => ({
    id: call.id ?? `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
  }))
}

/** Builds the `chat.completion.chunk` objects of one streamed answer, sharing id and timestamp. */
export function chunkFactory(model: string): {
  role(): object
  content(text: string): object
  toolCalls(calls: WireToolCall[]): object
  finish(reason: FinishReason): object
} {
  const id = `chatcmpl-${randomUUID()}`
  const created = Math.floor(Date.now() / 1000)
  const chunk = (delta: object, finishReason: FinishReason | null, extra: object = {}): object => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...extra,
  })
  return {
    role: () => chunk({ role: 'assistant', content: '' }, null),
    content: (text) => chunk({ content: text }, null),
    toolCalls: (calls) => chunk({ tool_calls: calls.map((call, index) => ({ index, ...call })) }, null),
    finish: (reason) => chunk({}, reason, { usage: FAKE_USAGE }),
  }
}

/** A complete non-streaming `chat.completion` object. */
export function completion(model: string, text: string, calls: WireToolCall[]): object {
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, ...(calls.length > 0 ? { tool_calls: calls } : {}) },
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: FAKE_USAGE,
  }
}

/** An OpenAI-style error body. */
export function errorBody(message: string, type: string, code: string | null): object {
  return { error: { message, type, code, param: null } }
}

/** One server-sent event line pair. */
export function sse(data: object | string): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`
}
