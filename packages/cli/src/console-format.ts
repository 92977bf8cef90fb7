// Human console lines for `up` and `serve` on a terminal: the same structured records the JSON
// log carries, rendered by pino-pretty as one short line each ("12:00:01 gateway listening on
// http://127.0.0.1:8787"). Only the rendering differs: what is logged (and redacted) does not.

/** How `up` and `serve` write their log: `auto` is `pretty` on a terminal, else `json`. */
export type LogFormat = 'auto' | 'pretty' | 'json'

export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'pretty', 'json']

/** The format to use: `auto` becomes `pretty` only when standard output is a terminal. */
export function resolveLogFormat(format: LogFormat, stdoutIsTty: boolean): 'pretty' | 'json' {
  if (format === 'auto') return stdoutIsTty ? 'pretty' : 'json'
  return format
}

/** What the processes of the stack are called in plain words. */
const CHILD_LABEL: Record<string, string> = {
  assistant: 'assistant runtime',
  moderator: 'moderator runtime',
  scheduler: 'scheduler',
}

type Record_ = Record<string, unknown>

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const childLabel = (record: Record_): string => {
  const name = str(record.child) ?? 'process'
  return CHILD_LABEL[name] ?? name
}

/** Fields never shown as `key=value` details (pino's own, or rendered into the words). */
const HIDDEN = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname', 'event', 'component'])

/** `key=value` for the fields of a record that the words do not already say. */
function details(record: Record_, skip: readonly string[] = []): string {
  const parts: string[] = []
  for (const [key, value] of Object.entries(record)) {
    if (HIDDEN.has(key) || skip.includes(key) || value === undefined || value === null) continue
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value)
    parts.push(`${key}=${text.length > 120 ? `${text.slice(0, 117)}...` : text}`)
  }
  return parts.join(' ')
}

const join = (...parts: (string | undefined)[]): string => parts.filter((p) => p).join(' ')

/**
 * A line a child process wrote: the scheduler writes JSON lines of its own (shown by their
 * message), the runtimes plain text (shown as written).
 */
function childOutput(record: Record_): string {
  const line = str(record.line) ?? ''
  let text = line
  if (line.startsWith('{')) {
    try {
      const inner = JSON.parse(line) as Record_
      text = str(inner.msg) ?? str(inner.message) ?? str(inner.event) ?? line
      const level = str(inner.level)
      if (level === 'warn' || level === 'error') text = `${level}: ${text}`
    } catch {
      // Not JSON after all: shown as written.
    }
  }
  return `${childLabel(record)} | ${text}`
}

/** One audit record as "owner gateway.job.get ok (200, 12 ms)". */
function audit(record: Record_): string {
  const what = str(record.tool) ?? str(record.rpcMethod) ?? str(record.httpMethod) ?? 'request'
  const outcome = str(record.outcome) ?? 'done'
  const error = str(record.errorCode)
  const screening = str(record.screening)
  const facts = [
    typeof record.status === 'number' ? String(record.status) : undefined,
    typeof record.durationMs === 'number' ? `${Math.round(record.durationMs)} ms` : undefined,
  ].filter((f) => f !== undefined)
  return join(
    str(record.username) ?? 'anonymous',
    what,
    error ? `${outcome}: ${error}` : outcome,
    screening && screening !== 'allowed' ? `(screening: ${screening})` : undefined,
    facts.length > 0 ? `(${facts.join(', ')})` : undefined,
  )
}

/**
 * The words of one log record: by its `event` where plain words say more than the message, else
 * its message, with the remaining fields as `key=value`.
 */
export function humanMessage(record: Record_): string {
  const msg = str(record.msg)
  switch (record.event) {
    case 'child_started':
      return `started the ${childLabel(record)}`
    case 'runtime_ready':
      return join(
        `${childLabel(record)} ready at ${str(record.url) ?? '?'}`,
        str(record.version) && `(OpenCode ${record.version})`,
      )
    case 'child_output':
      return childOutput(record)
    case 'child_stopped':
      return `${childLabel(record)} stopped`
    case 'audit':
      return audit(record)
    case 'listening':
      return `gateway listening on ${str(record.url) ?? '?'}`
    case 'ready':
      // Its message already says where (the MCP URL, the owner key file).
      return msg ?? 'ready'
    default:
      return join(msg ?? str(record.event), details(record, ['requestId']))
  }
}

/** pino-pretty options for {@link humanMessage} lines. */
export function prettyOptions(colorize: boolean) {
  return {
    colorize,
    sync: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,service',
    hideObject: true,
    // Not `singleLine`: with `hideObject` pino-pretty then ends no line at all.
    singleLine: false,
    messageFormat: (log: Record_) => humanMessage(log),
  }
}
