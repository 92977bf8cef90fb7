import { type FileDiff, FileDiffSchema } from './schemas.ts'

// The files a turn changed, without `GET /session/{id}/diff?messageID=`. The pinned runtime
// (opencode 1.18.33) answers that endpoint by reading the session's messages and returning the
// turn's user message `summary.diffs` (its own summary, re-computed as each step finishes), with
// git-quoted file names unquoted; no summary answers `[]`. So a message list already read holds
// the same answer the endpoint would give at that moment, and a caller that has the messages
// saves the request (about as costly as the messages read itself). The end-to-end test
// `test/e2e/turn-diff.test.ts` compares both on the real runtime.

/**
 * The diff of the turn started by user message `info` as the runtime's per-message diff endpoint
 * gives it, or `undefined` when the message's summary is not in the shape that endpoint returns
 * (the caller then asks the runtime).
 */
export function turnDiffOf(info: { role?: unknown; summary?: unknown }): FileDiff[] | undefined {
  if (info.role !== 'user') return undefined
  const summary = info.summary
  if (summary === undefined) return []
  if (summary === null || typeof summary !== 'object') return undefined
  const diffs = (summary as { diffs?: unknown }).diffs
  if (diffs === undefined) return []
  const parsed = FileDiffSchema.array().safeParse(diffs)
  if (!parsed.success) return undefined
  return parsed.data.map((d) => (d.file === undefined ? d : { ...d, file: unquoteGitPath(d.file) }))
}

const ESCAPES: Readonly<Record<string, number>> = {
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  b: 0x08,
  f: 0x0c,
  v: 0x0b,
  '\\': 0x5c,
  '"': 0x22,
}

/**
 * A path as git prints it when it holds unusual bytes (`"caf\303\251.txt"`), back to the name
 * (`café.txt`): C escapes and octal bytes inside double quotes, decoded as UTF-8, as the runtime
 * does it. Any other string is returned unchanged.
 */
export function unquoteGitPath(path: string): string {
  if (path.length < 2 || !path.startsWith('"') || !path.endsWith('"')) return path
  const inner = path.slice(1, -1)
  const bytes: number[] = []
  for (let i = 0; i < inner.length; i++) {
    const char = inner[i] as string
    if (char !== '\\') {
      bytes.push(char.charCodeAt(0) & 0xff)
      continue
    }
    const next = inner[i + 1]
    if (next === undefined) {
      bytes.push(0x5c)
      continue
    }
    const octal = /^[0-7]{1,3}/.exec(inner.slice(i + 1, i + 4))
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8) & 0xff)
      i += octal[0].length
      continue
    }
    bytes.push(ESCAPES[next] ?? next.charCodeAt(0) & 0xff)
    i++
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}
