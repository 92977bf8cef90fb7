import { spawn } from 'node:child_process'

/** Handle of an orphan watchdog. */
export interface OrphanWatchdog {
  /** Ends the watchdog without touching the watched group (call once the group is gone). */
  disarm(): void
  /** Closes the pipe, exactly what the OS does when this process dies: the group is killed. */
  trigger(): void
}

/**
 * A supervisor's children run in their own process groups, so nothing kills them when the
 * supervisor dies without running an exit handler (SIGKILL, OOM, a killed test worker). This
 * starts a tiny `sh` holding the read end of a pipe from this process; when the pipe closes (this
 * process is gone, however it died) it SIGKILLs process group `pgid`. Node has no parent-death
 * signal; this is the portable substitute. Disarm it once the group is gone so it never signals a
 * group id that could have been reused. Throws `RangeError` for a pgid of 0 or 1 (which would
 * signal more than one group).
 */
export function armOrphanWatchdog(pgid: number): OrphanWatchdog {
  if (!Number.isInteger(pgid) || pgid <= 1) throw new RangeError('invalid process group id')
  // `read` fails only on EOF: the pipe's writer (this process) is gone.
  const watchdog = spawn('/bin/sh', ['-c', `read _ || kill -9 -${pgid} 2>/dev/null; exit 0`], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  watchdog.on('error', () => {})
  watchdog.stdin?.on('error', () => {})
  watchdog.unref()
  // The pipe must not keep the event loop alive either.
  ;(watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return {
    disarm() {
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL')
    },
    trigger() {
      watchdog.stdin?.destroy()
    },
  }
}

/**
 * True while a process with this pid exists, also one of another user (`EPERM`) or a zombie not
 * yet reaped. A pid only means something on the host that gave it. Not a positive integer: false
 * (0 and negative numbers would name process groups).
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Signals a whole process group; false when it no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

interface LiveGroup {
  readonly watchdog: OrphanWatchdog
  readonly onAbandon: (() => void) | undefined
}

/** Process groups started by this package that are still running. Only these are ever signalled. */
const live = new Map<number, LiveGroup>()
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
let exitHookInstalled = false
let signalHooksInstalled = false

/**
 * Records a group this process started: arms its orphan watchdog and, once, the exit hook that
 * SIGKILLs every group still live when this process exits for any reason an `exit` handler sees.
 */
export function trackGroup(pgid: number, onAbandon?: () => void): void {
  live.set(pgid, { watchdog: armOrphanWatchdog(pgid), onAbandon })
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once('exit', abandonAll)
}

/** Forgets a group once it is gone (and ends its watchdog). */
export function untrackGroup(pgid: number): void {
  live.get(pgid)?.watchdog.disarm()
  live.delete(pgid)
}

/** Number of groups started here that are still running (for tests and diagnostics). */
export function liveProcessGroupCount(): number {
  return live.size
}

/**
 * For a harness that does not handle signals itself (a test worker): on SIGINT, SIGTERM or SIGHUP
 * every live group is SIGKILLed and its `onAbandon` runs, then the signal is raised again when
 * nothing else listens for it, so the default (dying) is kept. Idempotent. A supervisor that stops
 * its children gracefully on a signal (`sallyport up`) does not call this.
 */
export function killProcessGroupsOnSignals(): void {
  if (signalHooksInstalled) return
  signalHooksInstalled = true
  for (const signal of SIGNALS) process.once(signal, onSignal)
}

function onSignal(signal: NodeJS.Signals): void {
  abandonAll()
  for (const other of SIGNALS) process.removeListener(other, onSignal)
  signalHooksInstalled = false
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
}

function abandonAll(): void {
  for (const [pgid, group] of live) {
    signalGroup(pgid, 'SIGKILL')
    group.watchdog.disarm()
    try {
      group.onAbandon?.()
    } catch {
      // best effort while exiting
    }
  }
  live.clear()
}
