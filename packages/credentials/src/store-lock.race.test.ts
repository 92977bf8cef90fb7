import { spawnSync } from 'node:child_process'
import { mkdir, readdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { codeOf, tempStateDir } from '../test/helpers.ts'
import { withStoreLock } from './store-lock.ts'

// Runs `action` right after the `fireAt`-th readFile once armed: stands for another process acting
// while we are paused between reading a lock file and deleting it.
const hook = vi.hoisted(() => ({
  reads: 0,
  fireAt: 0,
  action: undefined as undefined | (() => Promise<void>),
}))

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>()
  const readFile = (async (...args: Parameters<typeof original.readFile>) => {
    const result = await original.readFile(...args)
    const action = hook.action
    if (action !== undefined && ++hook.reads === hook.fireAt) {
      hook.action = undefined
      await action()
    }
    return result
  }) as typeof original.readFile
  return { ...original, readFile, default: { ...original, readFile } }
})

function arm(fireAt: number, action: () => Promise<void>): void {
  hook.reads = 0
  hook.fireAt = fireAt
  hook.action = action
}

afterEach(() => {
  hook.action = undefined
})

const options = { timeoutMs: 200, staleMs: 5_000, displayPath: 'credentials/.lock' }

function record(pid: number, token: string): string {
  return JSON.stringify({ pid, hostname: hostname(), token, acquiredAt: new Date().toISOString() })
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
  return Number(child.stdout.toString())
}

async function lockPath(): Promise<string> {
  const dir = await tempStateDir()
  await mkdir(dir, { recursive: true })
  return join(dir, '.lock')
}

describe('lock removal races', () => {
  it('release never deletes a lock another process took after ours was broken as stale', async () => {
    const path = await lockPath()
    const newcomer = record(process.ppid, 'newcomer')
    await withStoreLock(path, options, async () => {
      // Release reads the lock (still ours); then, before it deletes, another process breaks it
      // as stale and takes the lock itself.
      arm(1, async () => {
        await unlink(path).catch(() => {})
        await writeFile(path, newcomer)
      })
    })
    expect(hook.action).toBeUndefined()
    expect(await readFile(path, 'utf8')).toBe(newcomer)
  })

  it('breaking a stale lock never deletes a lock someone took after the staleness check', async () => {
    const path = await lockPath()
    await writeFile(path, record(deadPid(), 'dead-owner'))
    const newcomer = record(process.ppid, 'newcomer')
    // Read 1: the waiter finds the lock stale. Read 2: the breaker re-checks it; right after,
    // the stale lock is replaced by a live holder's.
    arm(2, async () => {
      await unlink(path).catch(() => {})
      await writeFile(path, newcomer)
    })
    expect(await codeOf(() => withStoreLock(path, options, async () => {}))).toBe('ERR_CREDENTIALS_LOCKED')
    expect(hook.action).toBeUndefined()
    expect(await readFile(path, 'utf8')).toBe(newcomer)
  })

  it('leaves no temporary files after an ordinary acquire, stale break and release', async () => {
    const path = await lockPath()
    await writeFile(path, record(deadPid(), 'dead-owner'))
    await expect(withStoreLock(path, options, async () => 'ran')).resolves.toBe('ran')
    expect(await readdir(join(path, '..'))).toEqual([])
  })
})
