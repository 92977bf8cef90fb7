import { spawn } from 'node:child_process'
import { PeerTestsError } from './errors.ts'
import { redact } from './redact.ts'

export interface RunOptions {
  /** The process (and its process group) is killed after this long. */
  timeoutMs: number
  /** The complete environment of the child; nothing is inherited implicitly. */
  env: Record<string, string>
  cwd?: string
  /** Removed from stdout and stderr before they are returned (see `redact`). */
  secrets?: readonly string[]
}

export interface RunResult {
  /** Exit code, or `null` when a signal ended the process. */
  code: number | null
  signal: NodeJS.Signals | null
  timedOut: boolean
  stdout: string
  stderr: string
  durationMs: number
}

/**
 * Runs a peer tool asynchronously, so the servers it talks to keep running in this process
 * (a synchronous spawn would block them and the tool would time out against a frozen gateway).
 * The child gets its own process group, which is killed as a whole on timeout (while the child
 * still lives, so the group id is still ours), so helpers it starts do not outlive it.
 *
 * Throws `PeerTestsError` `ERR_PEER_SPAWN` when the executable cannot be started; the message
 * names the file only, never the arguments (which may hold a key).
 */
export function runProcess(file: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  const secrets = options.secrets ?? []
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const killGroup = (): void => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup()
    }, options.timeoutMs)
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      // Not the error itself as cause: it carries `spawnargs`, and the arguments may hold a key.
      reject(new PeerTestsError('ERR_PEER_SPAWN', `cannot start ${file} (${error.code ?? 'error'})`))
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({
        code,
        signal,
        timedOut,
        stdout: redact(stdout, secrets),
        stderr: redact(stderr, secrets),
        durationMs: Math.round(performance.now() - started),
      })
    })
  })
}
