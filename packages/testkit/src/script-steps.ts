/** One tool call the scripted model makes. `input` is sent as the call's JSON arguments. */
export interface ScriptToolCall {
  /** Tool name as the runtime offers it, e.g. `bash`, `read`, `write`, `todowrite`, `question`. */
  name: string
  /** Tool input; serialised with `JSON.stringify` into `function.arguments`. */
  input: unknown
  /** Call id; a unique `call_…` id is generated when omitted. */
  id?: string
}

/**
 * A text answer. The turn ends after it (`finish_reason: "stop"`).
 * `text` as an array is streamed one element per chunk. `delayMs` waits before the first content
 * chunk, `intervalMs` between chunks: together they make a slow answer for waitMs/cancel tests.
 */
export interface TextStep {
  text: string | readonly string[]
  delayMs?: number
  intervalMs?: number
}

/**
 * One or more tool calls (`finish_reason: "tool_calls"`), optionally preceded by text. The
 * runtime runs the tool(s) and sends the results back; that next request gets the next step.
 */
export interface ToolCallStep {
  toolCall?: ScriptToolCall
  toolCalls?: readonly ScriptToolCall[]
  text?: string
  delayMs?: number
}

/**
 * An HTTP error answer with an OpenAI-style body `{ error: { message, type, code } }`.
 * The default (400 + `invalid_request_error`) fails the turn at once; a `server_error` type or a
 * 429/5xx status makes the runtime retry with backoff for about 70 s (see the README).
 */
export interface ErrorStep {
  error: { status?: number; type?: string; message?: string; code?: string | null }
  delayMs?: number
}

/** What the scripted model does for one model request. */
export type ScriptStep = TextStep | ToolCallStep | ErrorStep

/** A step, or a function that picks the step from the request (for answers that depend on input). */
export type ScriptEntry = ScriptStep | ((request: ChatRequestView) => ScriptStep)

/** The parts of a chat request a dynamic step can look at. */
export interface ChatRequestView {
  /** The request body as received. */
  body: ChatCompletionBody
  /** Zero-based index of the step being answered. */
  step: number
  /** Content of the tool results sent since the previous assistant message, oldest first. */
  toolResults: string[]
}

/** The subset of an OpenAI chat completion request body the server reads. */
export interface ChatCompletionBody {
  model?: string
  stream?: boolean
  messages?: ChatMessage[]
  tools?: unknown[]
  [key: string]: unknown
}

/** One message of a chat completion request. */
export interface ChatMessage {
  role: string
  content?: string | null | Array<{ type: string; text?: string }>
  tool_calls?: unknown[]
  tool_call_id?: string
  [key: string]: unknown
}

export function isErrorStep(step: ScriptStep): step is ErrorStep {
  return 'error' in step && step.error !== undefined
}

export function isToolCallStep(step: ScriptStep): step is ToolCallStep {
  return (
    ('toolCall' in step && step.toolCall !== undefined) ||
    ('toolCalls' in step && step.toolCalls !== undefined)
  )
}
