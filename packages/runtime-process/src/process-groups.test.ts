import { spawn } from 'node:child_process'
import { describe, expect, it, vi } from 'vitest'
import {
  armOrphanWatchdog,
  isProcessAlive,
  killProcessGroupsOnSignals,
  liveProcessGroupCount,
} from './process-groups.ts'
import { spawnProcessGroup } from './spawn-process.ts'

function startGroup(): { pid: number; stop: () => void } {
  const child = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' })
  child.unref()
  return { pid: child.pid!, stop: () => child.kill('SIGKILL') }
}

describe('armOrphanWatchdog', () => {
  it('kills the group when the pipe from this process closes (as on its death)', async () => {
    const group = startGroup()
    const watchdog = armOrphanWatchdog(group.pid)
    expect(isProcessAlive(group.pid)).toBe(true)
    watchdog.trigger()
    await vi.waitFor(() => expect(isProcessAlive(group.pid)).toBe(false), { timeout: 10_000, interval: 50 })
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
        expect(isProcessAlive(group.pid), 'group killed although the watchdog was disarmed').toBe(true)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      expect(isProcessAlive(group.pid)).toBe(true)
    } finally {
      group.stop()
    }
  })

  it('rejects group ids that would signal more than one group', () => {
    expect(() => armOrphanWatchdog(0)).toThrow(RangeError)
    expect(() => armOrphanWatchdog(1)).toThrow(RangeError)
  })
})

describe('isProcessAlive', () => {
  it('is true for a running process, also one this user may not signal (EPERM)', () => {
    expect(isProcessAlive(process.pid)).toBe(true)
    // pid 1 always exists: root may signal it, anyone else gets EPERM; both mean alive.
    expect(isProcessAlive(1)).toBe(true)
  })

  it('is false once a process has exited and been reaped', async () => {
    const child = spawn('true', [], { stdio: 'ignore' })
    await new Promise((resolve) => child.once('exit', resolve))
    expect(isProcessAlive(child.pid!)).toBe(false)
  })

  it('is false for what is not a pid (0 and negative numbers name process groups)', () => {
    for (const pid of [0, -1, -process.pid, 1.5, Number.NaN])
      expect(isProcessAlive(pid), String(pid)).toBe(false)
  })
})

describe('killProcessGroupsOnSignals', () => {
  it('on SIGTERM kills every live group and runs its onAbandon; another listener keeps the process alive', async () => {
    const abandoned: string[] = []
    const child = spawnProcessGroup({
      name: 'sleeper',
      command: 'sleep',
      args: ['300'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: process.cwd(),
      onAbandon: () => abandoned.push('sleeper'),
    })
    expect(liveProcessGroupCount()).toBe(1)
    // With a listener of its own this worker is not re-signalled (nor killed) by the hook.
    const keepAlive = (): void => {}
    process.on('SIGTERM', keepAlive)
    try {
      killProcessGroupsOnSignals()
      killProcessGroupsOnSignals() // idempotent: one hook
      process.emit('SIGTERM', 'SIGTERM')
      expect(abandoned).toEqual(['sleeper'])
      expect(liveProcessGroupCount()).toBe(0)
      expect((await child.exit).signal).toBe('SIGKILL')
    } finally {
      process.removeListener('SIGTERM', keepAlive)
    }
  })
})
