/**
 * Process groups of runtimes still running in this process. On exit (a crashed or aborted test
 * run included) each group is SIGKILLed so no runtime outlives the test process, and the
 * registered cleanup (temp dir removal) runs. Only groups this module registered are touched.
 */
const live = new Map<number, () => void>()
let installed = false

export function trackProcessGroup(pgid: number, cleanup: () => void = () => {}): void {
  live.set(pgid, cleanup)
  if (installed) return
  installed = true
  process.once('exit', () => {
    for (const [group, after] of live) {
      killGroup(group, 'SIGKILL')
      try {
        after()
      } catch {
        // best effort at exit
      }
    }
    live.clear()
  })
}

export function untrackProcessGroup(pgid: number): void {
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

/** True while any process of the group (or the process itself) exists. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}
