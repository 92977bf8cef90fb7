import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { signalGroup, trackGroup, untrackGroup } from './process-groups.ts'

/** How a process ended. `error` is set when it could not be started at all. */
export interface ExitInfo {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly error?: Error
}

/** Which stream a line came from. */
export type OutputStream = 'stdout' | 'stderr'

/** One line of output, without its line break. */
export interface OutputLine {
  readonly text: string
  readonly stream: OutputStream
}

/** A user id / group id pair a process runs as. */
export interface ProcessUser {
  readonly uid: number
  readonly gid: number
}

/** One supervised process and its process group. See {@link spawnProcessGroup}. */
export interface SupervisedProcess {
  readonly name: string
  /** Process id, also the process group id; -1 when the spawn failed at once. */
  readonly pid: number
  /** Resolves once the process has exited (or failed to start). */
  readonly exit: Promise<ExitInfo>
  readonly exited: boolean
  /**
   * Called for every complete output line (stdout and stderr), also for the lines kept so far.
   * Returns the unsubscribe function.
   */
  onLine(listener: (line: string, stream: OutputStream) => void): () => void
  /** The last `count` kept lines (default 20), for error messages. */
  tail(count?: number): string[]
  /** The last `count` kept lines with their stream (default all kept). */
  output(count?: number): OutputLine[]
  /** SIGTERM to the group, SIGKILL after `graceMs`, then waits for the exit. Idempotent. */
  stop(graceMs: number): Promise<ExitInfo>
}

/** Options of {@link spawnProcessGroup}. */
export interface SpawnProcessGroupOptions {
  /** Names the process in messages (`assistant`). */
  readonly name: string
  readonly command: string
  readonly args: readonly string[]
  /** The whole environment: nothing of this process's own is added. */
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
  /** Run as this user (this process must be allowed to switch: root). */
  readonly user?: ProcessUser | undefined
  /** Output lines kept for replay and {@link SupervisedProcess.tail}; default 200. */
  readonly keepLines?: number
  /**
   * Runs (synchronously) should this process exit, or be killed through
   * {@link killProcessGroupsOnSignals}, while the group still lives, after the group was SIGKILLed:
   * removing a temporary directory, say.
   */
  readonly onAbandon?: () => void
}

const DEFAULT_KEPT_LINES = 200

/**
 * Starts a process in its own process group (so it and anything it starts can be signalled
 * together, and a terminal's Ctrl-C reaches only the supervisor, which then stops it cleanly).
 * While it runs, an exit hook and an orphan watchdog make sure the group does not outlive this
 * process. Throws `RangeError` for `keepLines` below 1.
 *
 * @example
 * const child = spawnProcessGroup({ name: 'printer', command: '/bin/echo', args: ['hi'], env: {}, cwd: '/' })
 * child.onLine((line) => console.log(line))
 * await child.exit
 */
export function spawnProcessGroup(options: SpawnProcessGroupOptions): SupervisedProcess {
  const keepLines = options.keepLines ?? DEFAULT_KEPT_LINES
  if (!Number.isInteger(keepLines) || keepLines < 1) throw new RangeError('keepLines must be >= 1')
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  })
  let exited = false
  const exit = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true
      resolve({ code, signal })
    })
    child.once('error', (error) => {
      // An error of a running process (a failed kill) is not its end.
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) return
      exited = true
      resolve({ code: null, signal: null, error })
    })
  })
  const pid = child.pid ?? -1
  if (pid > 0) {
    trackGroup(pid, options.onAbandon)
    void exit.then(() => {
      // The group may outlive its leader for a moment: make sure nothing of it stays behind.
      signalGroup(pid, 'SIGKILL')
      untrackGroup(pid)
    })
  }
  const listeners = new Set<(line: string, stream: OutputStream) => void>()
  /** The last lines (both streams, in arrival order): replayed to new listeners, shown by tail(). */
  const seen: OutputLine[] = []
  const feed = (stream: OutputStream) => {
    let partial = ''
    return (chunk: Buffer) => {
      partial += chunk.toString('utf8')
      const parts = partial.split('\n')
      partial = parts.pop() ?? ''
      for (const raw of parts) {
        const text = raw.replace(/\r$/, '')
        seen.push({ text, stream })
        if (seen.length > keepLines) seen.shift()
        for (const listener of listeners) listener(text, stream)
      }
    }
  }
  child.stdout?.on('data', feed('stdout'))
  child.stderr?.on('data', feed('stderr'))
  let stopping: Promise<ExitInfo> | undefined
  return {
    name: options.name,
    pid,
    exit,
    get exited() {
      return exited
    },
    onLine(listener) {
      for (const line of seen) listener(line.text, line.stream)
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    tail(count = 20) {
      return seen.slice(-count).map((line) => line.text)
    },
    output(count = keepLines) {
      return seen.slice(-count)
    },
    stop(graceMs) {
      stopping ??= (async () => {
        if (!exited && pid > 0) {
          signalGroup(pid, 'SIGTERM')
          await Promise.race([exit, sleep(graceMs)])
          if (!exited) signalGroup(pid, 'SIGKILL')
        }
        const info = await exit
        if (pid > 0) {
          signalGroup(pid, 'SIGKILL')
          untrackGroup(pid)
        }
        return info
      })()
      return stopping
    },
  }
}

/** "exited with code 1" / "was killed by SIGKILL" / "failed to start: …" */
export function describeExit(info: ExitInfo): string {
  if (info.error) return `failed to start: ${info.error.message}`
  if (info.signal) return `was killed by ${info.signal}`
  return `exited with code ${info.code}`
}
