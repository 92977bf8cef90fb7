import { RESOURCE_TEMPLATES, TOOLS } from '@sallyport/policy'
import type { RoundNote } from '../jobs/input-rounds.js'
import type { ScreeningRecord } from '../screening.js'

// The audit log: exactly one line per operation (each JSON-RPC message of a POST, each GET or
// DELETE), written when the response's last byte has been handed to the connection, with the
// operation's true outcome. Tool and resource handlers claim their operation's record and fill
// in the outcome; what no handler of ours answered (an unknown tool, a protocol error, a list
// call) is settled from the JSON-RPC response itself.

/**
 * `ok`: answered. `error`: the tool ran and reported an error (its code in `errorCode`).
 * `refused`: refused before any tool ran (unknown tool, invalid input, rate limit, protocol
 * error). `aborted`: the answer was not completely written: the client went away (closed or
 * reset its connection), or the gateway dropped a reader that stopped reading (`errorCode`
 * `stalled`).
 */
export type Outcome = 'ok' | 'error' | 'refused' | 'aborted'

export interface OperationRecord {
  rpcMethod: string | undefined
  /** The tool or resource name; `unknown` for a name the gateway does not have. */
  tool?: string | undefined
  /** JSON-RPC id: used to match handlers and answers, never logged. */
  readonly id?: string | number | null | undefined
  outcome?: Outcome
  errorCode?: string | undefined
  claimed?: boolean
  /** How the call's input was screened (outcome, latency, block category), when it was. */
  screening?: ScreeningRecord
  /** A multi round-trip round of the call: its number, forms asked, answers applied. */
  round?: RoundNote
}

/** What an audit line says of one operation (never a handle, an id, a key or client text). */
export function operationFields(op: OperationRecord): Record<string, unknown> {
  return {
    rpcMethod: op.rpcMethod,
    tool: op.tool,
    outcome: op.outcome,
    errorCode: op.errorCode,
    ...(op.screening && {
      screening: op.screening.outcome,
      screeningMs: op.screening.ms,
      ...(op.screening.category !== undefined && { screeningCategory: op.screening.category }),
    }),
    ...(op.round && {
      inputRound: op.round.round,
      ...(op.round.asked !== undefined && { inputAsked: op.round.asked }),
      ...(op.round.answered !== undefined && { inputAnswered: op.round.answered }),
      ...(op.round.declined !== undefined && { inputDeclined: op.round.declined }),
    }),
  }
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))
/** Random bytes drawn at once for the ids: 512 ids per draw. */
const ID_POOL_BYTES = 4096

/**
 * A source of request ids for audit lines and the `X-Request-Id` header: 16 random hex digits
 * each. Nothing is ever authorised by an id, but a counter would let anyone who sees two of its
 * ids count everyone else's requests in between; the random bytes are drawn 4 KiB at a time, so
 * an id costs a table lookup per byte rather than a draw. `random` fills the bytes given (Web
 * Crypto by default).
 */
export function requestIdSource(
  random: (bytes: Uint8Array) => Uint8Array = (bytes) => crypto.getRandomValues(bytes),
): () => string {
  let pool: Uint8Array = new Uint8Array(0)
  let at = 0
  return () => {
    if (at + 8 > pool.length) {
      pool = random(new Uint8Array(ID_POOL_BYTES))
      at = 0
    }
    let id = ''
    for (let i = 0; i < 8; i++) id += HEX[pool[at + i] as number]
    at += 8
    return id
  }
}

const KNOWN_NAMES: ReadonlySet<string> = new Set([
  ...TOOLS.map((t) => t.name),
  ...RESOURCE_TEMPLATES.map((r) => r.name),
])

/** A name safe and meaningful to log: one of the gateway's own names, else `unknown`. */
export function knownName(name: unknown): string | undefined {
  if (name === undefined) return undefined
  return typeof name === 'string' && KNOWN_NAMES.has(name) ? name : 'unknown'
}

const METHOD = /^[\w./-]{1,64}$/
const safeMethod = (method: unknown): string | undefined =>
  typeof method === 'string' && METHOD.test(method) ? method : 'invalid'

export interface AuditBook {
  readonly operations: readonly OperationRecord[]
  /**
   * The record of the request with this JSON-RPC id that no handler has claimed yet (a handler
   * calls this once, at its start). A fresh record when there is none, so nothing is lost.
   */
  claim(id: unknown, rpcMethod: string): OperationRecord
}

/** One record per JSON-RPC message of the parsed body (an array for a batch). */
export function auditBook(messages: readonly unknown[] | undefined): AuditBook {
  const operations: OperationRecord[] = (messages ?? [undefined]).map((message) => {
    if (message === undefined) return { rpcMethod: undefined }
    const m = message as { id?: unknown; method?: unknown; params?: { name?: unknown } }
    const rpcMethod = safeMethod(m.method)
    const id = typeof m.id === 'string' || typeof m.id === 'number' || m.id === null ? m.id : undefined
    return {
      rpcMethod,
      id,
      // A message with `"id": null` is no valid request (refused as such): it names no tool.
      ...(rpcMethod === 'tools/call' && id !== null && { tool: knownName(m.params?.name) ?? 'unknown' }),
    }
  })
  return {
    operations,
    claim(id, rpcMethod) {
      const found = operations.find((o) => !o.claimed && o.id === id && o.rpcMethod === rpcMethod)
      const record = found ?? { rpcMethod }
      if (!found) operations.push(record)
      record.claimed = true
      return record
    },
  }
}

const RPC_ERRORS: Record<number, string> = {
  [-32700]: 'parse_error',
  [-32600]: 'invalid_request',
  [-32601]: 'unknown_method',
  [-32602]: 'invalid_params',
  [-32603]: 'internal',
  [-32002]: 'not_found',
}

interface RpcAnswer {
  id?: unknown
  error?: { code?: unknown; data?: { code?: unknown } }
  result?: { isError?: unknown; content?: Array<{ type?: unknown; text?: unknown }> }
}

/** The JSON-RPC answers in a response body: a JSON object or array, or the data of SSE events. */
function answersIn(text: string, contentType: string): RpcAnswer[] {
  const parse = (json: string): RpcAnswer[] => {
    try {
      const value: unknown = JSON.parse(json)
      return (Array.isArray(value) ? value : [value]).filter((v) => v && typeof v === 'object')
    } catch {
      return []
    }
  }
  if (!contentType.includes('text/event-stream')) return parse(text)
  const answers: RpcAnswer[] = []
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n')
    if (data !== '') answers.push(...parse(data))
  }
  return answers
}

function errorCodeOf(result: RpcAnswer['result']): string {
  const text = result?.content?.find((c) => c.type === 'text')?.text
  if (typeof text === 'string') {
    try {
      const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code
      if (typeof code === 'string' && /^[a-z_]{1,40}$/.test(code)) return code
    } catch {}
  }
  return 'tool_error'
}

/** The status the MCP SDK answers with when the client's connection closed first (nginx's 499). */
const CLIENT_CLOSED = 499

/**
 * Fills in the outcome of every record no handler settled, from the answers in the response
 * body. Records left without an answer were cut short (`aborted`) unless they were
 * notifications (no answer expected).
 */
export function settleFromResponse(
  book: AuditBook,
  body: string | undefined,
  contentType: string,
  status: number,
  complete: boolean,
): void {
  const open = book.operations.filter((o) => o.outcome === undefined)
  if (open.length === 0) return
  const answers = body === undefined ? [] : answersIn(body, contentType)
  for (const record of open) {
    const index = answers.findIndex((a) => a.id === record.id)
    const answer = index >= 0 ? answers.splice(index, 1)[0] : undefined
    if (answer?.error) {
      const data = answer.error.data?.code
      const code = typeof answer.error.code === 'number' ? RPC_ERRORS[answer.error.code] : undefined
      record.outcome = 'refused'
      record.errorCode =
        record.errorCode ??
        (typeof data === 'string' && /^[a-z_]{1,40}$/.test(data) ? data : (code ?? 'rpc_error'))
    } else if (answer?.result) {
      record.outcome = answer.result.isError === true ? 'error' : 'ok'
      if (record.outcome === 'error') record.errorCode = record.errorCode ?? errorCodeOf(answer.result)
    } else if (
      record.id === undefined &&
      record.rpcMethod !== undefined &&
      !record.rpcMethod.startsWith('notifications/') &&
      status < 400
    ) {
      // A request sent without an id (`tools/call` as a notification): nothing ran, nothing answered.
      record.outcome = 'refused'
      record.errorCode = record.errorCode ?? 'not_a_request'
    } else if (record.id === undefined && status < 400) {
      record.outcome = 'ok' // a notification, or a GET/DELETE answered
    } else if (status === CLIENT_CLOSED) {
      // The MCP SDK's answer when the request's connection closed before a result: the call was
      // under way (or about to be), and its answer was never delivered.
      record.outcome = 'aborted'
    } else if (status >= 400) {
      record.outcome = 'refused'
      record.errorCode = record.errorCode ?? `http_${status}`
    } else {
      record.outcome = complete ? 'refused' : 'aborted'
      if (complete) record.errorCode = record.errorCode ?? 'no_answer'
    }
  }
}

/**
 * Marks the operations whose answer was not completely written (the connection closed or was
 * dropped before its last byte was handed over): an answer produced (`ok`, or a tool's `error`,
 * whose code is kept) was not received, so it is `aborted`. A refusal stays one (nothing ran
 * either way), and so does a notification (no answer is expected). `errorCode` (`stalled` when
 * the gateway dropped a reader that stopped reading) replaces the code of every aborted one.
 */
export function settleUndelivered(book: AuditBook, errorCode?: string): void {
  for (const record of book.operations) {
    if (record.rpcMethod?.startsWith('notifications/')) continue
    if (record.outcome === 'ok' || record.outcome === 'error' || record.outcome === undefined)
      record.outcome = 'aborted'
    if (record.outcome === 'aborted' && errorCode !== undefined) record.errorCode = errorCode
  }
}
