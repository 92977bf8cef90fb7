import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { armOrphanWatchdog } from './orphan-watchdog.ts'
import { waitFor } from './wait-for.ts'

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

function startGroup(): { pid: number; stop: () => void } {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' })
  child.unref()
  return { pid: child.pid!, stop: () => child.kill('SIGKILL') }
}

describe('armOrphanWatchdog', () => {
  it('kills the group when the pipe from this process closes (as on its death)', async () => {
    const group = startGroup()
    const watchdog = armOrphanWatchdog(group.pid)
    expect(alive(group.pid)).toBe(true)
    watchdog.trigger()
    await waitFor(() => !alive(group.pid), { description: 'group killed by the watchdog' })
  })

  it('leaves the group alone once disarmed', async () => {
    const group = startGroup()
    const watchdog = armOrphanWatchdog(group.pid)
    try {
      watchdog.disarm()
      // Without the trigger the pipe never closes while this process lives, so the watchdog would
      // not fire even if disarm() did nothing. Asserting an absence: a bounded 500 ms watch.
      watchdog.trigger()
      const until = Date.now() + 500
      while (Date.now() < until) {
        expect(alive(group.pid), 'group killed although the watchdog was disarmed').toBe(true)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      expect(alive(group.pid)).toBe(true)
    } finally {
      group.stop()
    }
  })

  it('rejects group ids that would signal more than one group', () => {
    expect(() => armOrphanWatchdog(0)).toThrow(RangeError)
    expect(() => armOrphanWatchdog(1)).toThrow(RangeError)
  })
})
