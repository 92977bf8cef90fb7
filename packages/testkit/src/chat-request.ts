import type { ChatCompletionBody, ChatMessage } from './script-steps.ts'

/** Matches a script marker such as `[[script:abc-123]]`; group 1 is the script id. */
export const SCRIPT_MARKER_PATTERN = /\[\[script:([A-Za-z0-9_.-]+)\]\]/g

/** The marker text for a script id: put it anywhere in the prompt's text. */
export function scriptMarker(id: string): string {
  return `[[script:${id}]]`
}

/** How the server classified one chat completion request. */
export type ChatRequestKind =
  | { kind: 'title' }
  | { kind: 'scripted'; scriptId: string; step: number; toolResults: string[] }
  | { kind: 'unscripted'; toolResults: string[] }

/** The text of a message, whether its content is a string or an array of parts. */
export function messageText(message: ChatMessage): string {
  const { content } = message
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n')
}

/**
 * Title generation is the runtime's second request per first prompt: it carries no tools and a
 * system prompt about titles. A scripted request always offers tools (at least `question`).
 */
export function isTitleRequest(body: ChatCompletionBody): boolean {
  if (Array.isArray(body.tools) && body.tools.length > 0) return false
  const messages = Array.isArray(body.messages) ? body.messages : []
  const system = messages
    .filter((m) => m.role === 'system')
    .map(messageText)
    .join('\n')
  return /title generator|generate a (brief )?title/i.test(system) || system === ''
}

/** The last script id named in a text, or undefined. */
export function findScriptId(text: string): string | undefined {
  let id: string | undefined
  for (const match of text.matchAll(SCRIPT_MARKER_PATTERN)) id = match[1]
  return id
}

/**
 * Decides which script and which step answer a request, from the conversation alone (no server
 * state, so concurrent sessions, retries and restarts cannot desynchronise it): the newest user
 * message carrying a marker selects the script, and the number of assistant messages after it is
 * the index of the step to run (each earlier step produced exactly one assistant message).
 */
export function classifyChatRequest(body: ChatCompletionBody): ChatRequestKind {
  if (isTitleRequest(body)) return { kind: 'title' }
  const messages = Array.isArray(body.messages) ? body.messages : []
  const toolResults = trailingToolResults(messages)
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== 'user') continue
    const scriptId = findScriptId(messageText(message))
    if (scriptId === undefined) continue
    const step = messages.slice(i + 1).filter((m) => m.role === 'assistant').length
    return { kind: 'scripted', scriptId, step, toolResults }
  }
  return { kind: 'unscripted', toolResults }
}

/** Contents of the tool messages after the last assistant message (the results of its calls). */
function trailingToolResults(messages: ChatMessage[]): string[] {
  const results: string[] = []
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== 'tool') break
    results.unshift(messageText(message))
  }
  return results
}
