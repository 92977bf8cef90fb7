import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { chunkFactory, completion, errorBody, sse, toWireToolCalls } from './openai-format.ts'
import { isErrorStep, isToolCallStep, type ScriptStep } from './script-steps.ts'

/**
 * Writes one step as the HTTP answer: an error status with an OpenAI error body, a non-streaming
 * `chat.completion`, or an SSE stream of chunks ending with `finish_reason` + usage and `[DONE]`.
 * Waits (`delayMs`, `intervalMs`) are cut short by `signal` (client gone): it then rejects with
 * the abort error and writes nothing more.
 */
export async function writeAnswer(
  res: ServerResponse,
  step: ScriptStep,
  { model, stream, signal }: { model: string; stream: boolean; signal: AbortSignal },
): Promise<void> {
  if (step.delayMs) await sleep(step.delayMs, undefined, { signal })
  if (isErrorStep(step)) {
    const {
      status = 400,
      type = 'invalid_request_error',
      message = 'scripted error',
      code = null,
    } = step.error
    json(res, status, errorBody(message, type, code))
    return
  }
  const calls = isToolCallStep(step) ? toWireToolCalls(step.toolCalls ?? [step.toolCall!]) : []
  const textParts = typeof step.text === 'string' ? [step.text] : [...(step.text ?? [])]
  if (!stream) {
    json(res, 200, completion(model, textParts.join(''), calls))
    return
  }
  const chunks = chunkFactory(model)
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  })
  res.write(sse(chunks.role()))
  const intervalMs = 'intervalMs' in step ? (step.intervalMs ?? 0) : 0
  for (const [index, text] of textParts.entries()) {
    if (index > 0 && intervalMs > 0) await sleep(intervalMs, undefined, { signal })
    if (signal.aborted) return
    res.write(sse(chunks.content(text)))
  }
  if (calls.length > 0) res.write(sse(chunks.toolCalls(calls)))
  res.write(sse(chunks.finish(calls.length > 0 ? 'tool_calls' : 'stop')))
  res.end(sse('[DONE]'))
}

/** Writes a JSON answer. */
export function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}
