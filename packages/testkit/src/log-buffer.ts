/** Keeps the last `maxLines` lines written to it (stdout and stderr of the runtime, tagged). */
export interface LogBuffer {
  push(source: 'out' | 'err', chunk: Buffer | string): void
  /** All kept lines joined with newlines. */
  text(): string
  /** The last `count` lines joined with newlines. */
  tail(count: number): string
  /** Registers a listener for each complete stdout/stderr line; returns an unsubscribe function. */
  onLine(listener: (source: 'out' | 'err', line: string) => void): () => void
}

export function createLogBuffer(maxLines = 2000, echo?: (line: string) => void): LogBuffer {
  const lines: string[] = []
  const partial = { out: '', err: '' }
  const listeners = new Set<(source: 'out' | 'err', line: string) => void>()
  return {
    push(source, chunk) {
      const pieces = (partial[source] + chunk.toString()).split('\n')
      partial[source] = pieces.pop() ?? ''
      for (const line of pieces) {
        lines.push(`[${source}] ${line}`)
        if (lines.length > maxLines) lines.shift()
        echo?.(`[runtime ${source}] ${line}`)
        for (const listener of listeners) listener(source, line)
      }
    },
    text: () =>
      [
        ...lines,
        ...(['out', 'err'] as const).filter((s) => partial[s]).map((s) => `[${s}] ${partial[s]}`),
      ].join('\n'),
    tail(count) {
      return this.text().split('\n').slice(-count).join('\n')
    },
    onLine(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
