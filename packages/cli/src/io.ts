/** Where a command writes. The entry passes the process streams; tests pass collectors. */
export interface Io {
  /** Results: what a script may parse (JSON with `--json`), and one-time keys. */
  readonly out: (text: string) => void
  /** Progress, hints and logs for the operator. */
  readonly err: (text: string) => void
  readonly env: NodeJS.ProcessEnv
}

/** The process's own streams and environment. */
export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
  }
}
