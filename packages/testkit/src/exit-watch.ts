import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { killGroup, untrackProcessGroup } from './process-cleanup.ts'

/** Resolves once the child has exited, with its exit code/signal or spawn error. */
export interface ExitWatch {
  readonly promise: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>
  readonly exited: boolean
}

export function watchExit(child: ChildProcess): ExitWatch {
  let exited = false
  const promise = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once('exit', (code, signal) => {
        exited = true
        resolve({ code, signal })
      })
      child.once('error', (error) => {
        if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) return
        exited = true
        resolve({ code: null, signal: null, error })
      })
    },
  )
  return {
    promise,
    get exited() {
      return exited
    },
  }
}

/** SIGTERM the group, SIGKILL after `graceMs`, wait for exit, then SIGKILL leftovers of the group. */
export async function terminate(child: ChildProcess, exit: ExitWatch, graceMs: number): Promise<void> {
  const pid = child.pid
  if (pid === undefined) return
  if (!exit.exited) {
    if (graceMs > 0) {
      killGroup(pid, 'SIGTERM')
      await Promise.race([exit.promise, sleep(graceMs)])
    }
    if (!exit.exited) killGroup(pid, 'SIGKILL')
    await exit.promise
  }
  killGroup(pid, 'SIGKILL')
  untrackProcessGroup(pid)
}
