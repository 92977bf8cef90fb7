/**
 * `state/stack.env`: `NAME='value'` lines that `up` writes on every start and the scheduler (and
 * the CLI, for the previous start's values) reads back. Its quoting is defined here only, so the
 * writer and every reader agree.
 */

/** `value` single-quoted for a `NAME=value` line (a `'` becomes `'\''`); one line only. */
export function quoteStackEnvValue(value: string): string {
  if (/[\n\r\0]/.test(value)) throw new RangeError('stack.env values must be single-line')
  return `'${value.replaceAll("'", `'\\''`)}'`
}

/** The variables of a `state/stack.env` text; unknown or malformed lines are ignored. */
export function parseStackEnv(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of text.split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line)
    if (!match?.[1]) continue
    out.set(match[1], unquote(match[2] ?? ''))
  }
  return out
}

function unquote(value: string): string {
  if (!value.startsWith("'")) return value
  return value.slice(1, -1).replaceAll(`'\\''`, "'")
}
