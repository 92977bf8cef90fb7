import { spawn } from 'node:child_process'

/** Handle of a watchdog. */
export interface OrphanWatchdog {
  /** Ends the watchdog without touching the watched group (call once the group is gone). */
  disarm(): void
}

/**
 * The supervisor's children run in their own process groups, so nothing kills them when `up`
 * itself dies without running an exit handler (SIGKILL, OOM). This starts a tiny `sh` holding
 * the read end of a pipe from this process; when the pipe closes (this process is gone, however
 * it died) it SIGKILLs process group `pgid`. Node has no parent-death signal; this is the
 * portable substitute. (The same technique as testkit's harness, which the CLI cannot import.)
 */
export function armOrphanWatchdog(pgid: number): OrphanWatchdog {
  if (!Number.isInteger(pgid) || pgid <= 1) throw new RangeError('invalid process group id')
  // `read` fails only on EOF: the writer (this process) is gone.
  const watchdog = spawn('/bin/sh', ['-c', `read _ || kill -9 -${pgid} 2>/dev/null; exit 0`], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  watchdog.on('error', () => {})
  watchdog.stdin?.on('error', () => {})
  watchdog.unref()
  ;(watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.()
  return {
    disarm() {
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL')
    },
  }
}
