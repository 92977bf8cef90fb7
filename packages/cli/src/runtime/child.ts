import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { armOrphanWatchdog } from './orphan-watchdog.ts'

export interface ExitInfo {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly error?: string
}

/** One supervised process (and its process group). */
export interface Child {
  readonly name: string
  readonly pid: number
  readonly exit: Promise<ExitInfo>
  readonly exited: boolean
  /** Called for every output line (stdout and stderr), also for lines already seen. */
  onLine(listener: (line: string, stream: 'stdout' | 'stderr') => void): () => void
  /** The last output lines, for error messages. */
  tail(count?: number): string[]
  /** SIGTERM to the group, SIGKILL after `graceMs`, then waits for the exit. Idempotent. */
  stop(graceMs: number): Promise<ExitInfo>
}

export interface SpawnChildOptions {
  readonly name: string
  readonly command: string
  readonly args: readonly string[]
  readonly env: Record<string, string>
  readonly cwd: string
}

/** Output lines kept per child (for replay to late listeners and for error messages). */
const KEPT_LINES = 200

const live = new Set<number>()
let exitHookInstalled = false

/** Last resort: if the supervisor exits for any reason, no child group outlives it. */
function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once('exit', () => {
    for (const pid of live) signalGroup(pid, 'SIGKILL')
  })
}

function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}

/**
 * Starts a process in its own process group (so it and anything it starts can be signalled
 * together, and a terminal's Ctrl-C reaches only the supervisor, which then stops it cleanly).
 */
export function spawnChild(options: SpawnChildOptions): Child {
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let exited = false
  const exit = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true
      resolve({ code, signal })
    })
    child.once('error', (error) => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) return
      exited = true
      resolve({ code: null, signal: null, error: error.message })
    })
  })
  const pid = child.pid ?? -1
  if (pid > 0) {
    installExitHook()
    live.add(pid)
    // Covers the deaths no exit hook sees (SIGKILL of the supervisor).
    const watchdog = armOrphanWatchdog(pid)
    void exit.then(() => {
      // The group may outlive its leader for a moment: make sure nothing of it stays behind.
      signalGroup(pid, 'SIGKILL')
      live.delete(pid)
      watchdog.disarm()
    })
  }
  const listeners = new Set<(line: string, stream: 'stdout' | 'stderr') => void>()
  /** The last lines (both streams, in arrival order): replayed to new listeners, shown by tail(). */
  const seen: [string, 'stdout' | 'stderr'][] = []
  const feed = (stream: 'stdout' | 'stderr') => {
    let partial = ''
    return (chunk: Buffer) => {
      partial += chunk.toString('utf8')
      const parts = partial.split('\n')
      partial = parts.pop() ?? ''
      for (const raw of parts) {
        const line = raw.replace(/\r$/, '')
        seen.push([line, stream])
        if (seen.length > KEPT_LINES) seen.shift()
        for (const listener of listeners) listener(line, stream)
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
      for (const [line, stream] of seen) listener(line, stream)
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    tail(count = 20) {
      return seen.slice(-count).map(([line]) => line)
    },
    stop(graceMs) {
      stopping ??= (async () => {
        if (!exited && pid > 0) {
          signalGroup(pid, 'SIGTERM')
          await Promise.race([exit, sleep(graceMs)])
          if (!exited) signalGroup(pid, 'SIGKILL')
        }
        const info = await exit
        if (pid > 0) signalGroup(pid, 'SIGKILL')
        return info
      })()
      return stopping
    },
  }
}

/** "exited with code 1" / "was killed by SIGKILL" / "failed to start: …" */
export function describeExit(info: ExitInfo): string {
  if (info.error) return `failed to start: ${info.error}`
  if (info.signal) return `was killed by ${info.signal}`
  return `exited with code ${info.code}`
}
