import { spawn } from 'node:child_process'

/** Paths printed by one ripgrep run, and whether the time budget had to kill it. */
export interface RipgrepRun {
  /** Relative paths (`./` removed) in ripgrep's order; ends when ripgrep exits or is killed. */
  readonly paths: AsyncIterable<string>
  /** True when ripgrep was killed at the deadline: its output is incomplete. */
  timedOut(): boolean
  /** True when ripgrep could not be started at all. */
  failed(): boolean
}

const decoder = new TextDecoder('utf-8', { fatal: true })

function decodePath(bytes: Uint8Array): string | undefined {
  try {
    const path = decoder.decode(bytes)
    return path.startsWith('./') ? path.slice(2) : path
  } catch {
    return undefined // not UTF-8: no string names that file reliably, so it is never returned
  }
}

/**
 * Runs ripgrep in `root` (never through a shell: arguments go to execve as they are) with an
 * empty environment, reads its NUL-separated output as it comes, and kills it with SIGKILL at
 * the deadline or as soon as the consumer stops iterating.
 */
export function runRipgrep(
  binary: string,
  root: string,
  args: readonly string[],
  timeoutMs: number,
): RipgrepRun {
  let timedOut = false
  let failed = false
  async function* paths(): AsyncGenerator<string> {
    const child = spawn(binary, args, {
      cwd: root,
      env: {},
      stdio: ['ignore', 'pipe', 'ignore'],
      shell: false,
    })
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()))
    child.on('error', () => {
      failed = true
    })
    const kill = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, timeoutMs)
    let pending: Buffer = Buffer.alloc(0)
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        let start = 0
        let end = pending.indexOf(0, start)
        while (end !== -1) {
          const path = decodePath(pending.subarray(start, end))
          if (path !== undefined && path !== '') yield path
          start = end + 1
          end = pending.indexOf(0, start)
        }
        pending = pending.subarray(start)
      }
    } finally {
      clearTimeout(timer)
      kill()
      await closed // reaped before the search returns: no stray ripgrep outlives a search
    }
  }
  return { paths: paths(), timedOut: () => timedOut, failed: () => failed }
}
