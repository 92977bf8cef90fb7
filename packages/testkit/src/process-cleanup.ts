import { armOrphanWatchdog, type OrphanWatchdog } from './orphan-watchdog.ts'

/**
 * Process groups of runtimes still running in this process, so that none outlives it:
 * - on `exit` (normal end, `process.exit`, an uncaught error) each group is SIGKILLed and its
 *   cleanup (temp dir removal) runs;
 * - on SIGINT/SIGTERM/SIGHUP the same happens, then the signal is re-raised if nobody else
 *   handles it (so the default behaviour, dying, is kept);
 * - on a death no handler sees (SIGKILL, OOM) a per-group watchdog kills the group.
 * Only groups registered here are ever signalled.
 */
interface Tracked {
  cleanup: () => void
  watchdog: OrphanWatchdog
}

const live = new Map<number, Tracked>()
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
let installed = false

export function trackProcessGroup(pgid: number, cleanup: () => void = () => {}): void {
  live.set(pgid, { cleanup, watchdog: armOrphanWatchdog(pgid) })
  if (installed) return
  installed = true
  process.once('exit', killAll)
  for (const signal of SIGNALS) process.once(signal, onSignal)
}

/** Forgets a group once it is gone (and ends its watchdog). */
export function untrackProcessGroup(pgid: number): void {
  live.get(pgid)?.watchdog.disarm()
  live.delete(pgid)
}

/** Signals a whole process group; false when it no longer exists. */
export function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

/** Number of groups still tracked (for tests and diagnostics). */
export function trackedGroupCount(): number {
  return live.size
}

function killAll(): void {
  for (const [pgid, tracked] of live) {
    killGroup(pgid, 'SIGKILL')
    tracked.watchdog.disarm()
    try {
      tracked.cleanup()
    } catch {
      // best effort while exiting
    }
  }
  live.clear()
}

function onSignal(signal: NodeJS.Signals): void {
  killAll()
  for (const other of SIGNALS) process.removeListener(other, onSignal)
  installed = false
  process.removeListener('exit', killAll)
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
}
