import { spawn } from 'node:child_process'

/** Handle of a watchdog. */
export interface OrphanWatchdog {
  /** Ends the watchdog without touching the watched group. */
  disarm(): void
  /** Closes the pipe, exactly what the OS does when this process dies: the group is killed. */
  trigger(): void
}

/**
 * Starts a tiny `sh` that holds the read end of a pipe from this process and SIGKILLs process
 * group `pgid` when the pipe closes, i.e. when this process dies in a way no `exit` handler sees
 * (SIGKILL, OOM, a killed test worker). Disarm it once the group is gone so it never signals a
 * group id that could have been reused. Returns a no-op watchdog where `/bin/sh` cannot be spawned.
 */
export function armOrphanWatchdog(pgid: number): OrphanWatchdog {
  if (!Number.isInteger(pgid) || pgid <= 1) throw new RangeError(`invalid process group id: ${pgid}`)
  // `read` returns non-zero only on EOF: the pipe's writer (this process) is gone.
  const script = `read _ || kill -9 -${pgid} 2>/dev/null; exit 0`
  const watchdog = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] })
  watchdog.on('error', () => {})
  watchdog.stdin?.on('error', () => {})
  watchdog.unref()
  // The pipe must not keep the event loop alive either.
  ;(watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return {
    disarm() {
      if (watchdog.exitCode !== null || watchdog.signalCode !== null) return
      watchdog.kill('SIGKILL')
    },
    trigger() {
      watchdog.stdin?.destroy()
    },
  }
}
