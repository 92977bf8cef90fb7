import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { deferred, schedulerErrorOf, useTempDirs } from '../test/helpers.ts'
import { withTaskLock } from './lock.ts'

const tempDir = useTempDirs('sp-lock-')

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
  return Number(child.stdout.toString())
}

describe('withTaskLock', () => {
  it('holds a lock file with this pid while the work runs and removes it after', async () => {
    const dir = tempDir()
    const path = join(dir, '.tasks.lock')
    const seen = await withTaskLock(path, async () => readFileSync(path, 'utf8'))
    expect(seen).toMatch(new RegExp(`^${process.pid} [0-9a-f]{24}\\n$`))
    expect(readdirSync(dir)).toEqual([])
  })

  it('releases the lock when the work throws, and passes the error on', async () => {
    const dir = tempDir()
    const path = join(dir, '.tasks.lock')
    await expect(
      withTaskLock(path, async () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(readdirSync(dir)).toEqual([])
    expect(await withTaskLock(path, async () => 'again')).toBe('again')
  })

  it('serialises concurrent callers in one process, in call order', async () => {
    const path = join(tempDir(), '.tasks.lock')
    let active = 0
    let maxActive = 0
    const order: number[] = []
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        withTaskLock(path, async () => {
          active++
          maxActive = Math.max(maxActive, active)
          expect(existsSync(path)).toBe(true)
          await new Promise<void>((resolve) => setImmediate(resolve))
          order.push(i)
          active--
        }),
      ),
    )
    expect(maxActive).toBe(1)
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(existsSync(path)).toBe(false)
  })

  it('a failing caller does not block the next one', async () => {
    const path = join(tempDir(), '.tasks.lock')
    const gate = deferred<void>()
    const first = withTaskLock(path, async () => {
      await gate.promise
      throw new Error('first failed')
    })
    const second = withTaskLock(path, async () => 'second ran')
    gate.resolve()
    await expect(first).rejects.toThrow('first failed')
    expect(await second).toBe('second ran')
  })

  it('takes over a lock left by a dead process', async () => {
    const path = join(tempDir(), '.tasks.lock')
    writeFileSync(path, `${deadPid()}\n`)
    expect(await withTaskLock(path, async () => readFileSync(path, 'utf8'), { timeoutMs: 2_000 })).toMatch(
      new RegExp(`^${process.pid} [0-9a-f]{24}\\n$`),
    )
    expect(existsSync(path)).toBe(false)
  })

  it('waits for a live holder and times out with ERR_SCHEDULER_LOCKED, leaving its lock alone', async () => {
    const path = join(tempDir(), '.tasks.lock')
    writeFileSync(path, `${process.ppid}\n`)
    let ran = false
    const started = Date.now()
    const error = await schedulerErrorOf(
      withTaskLock(
        path,
        async () => {
          ran = true
        },
        { timeoutMs: 150 },
      ),
    )
    expect(error.code).toBe('ERR_SCHEDULER_LOCKED')
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(ran).toBe(false)
    expect(readFileSync(path, 'utf8')).toBe(`${process.ppid}\n`)
  })

  it('gets the lock once a live holder releases it', async () => {
    const path = join(tempDir(), '.tasks.lock')
    writeFileSync(path, `${process.ppid}\n`)
    const waiting = withTaskLock(path, async () => readFileSync(path, 'utf8'), { timeoutMs: 5_000 })
    // Release from "the other process" once the waiter has had a look.
    await new Promise<void>((resolve) => setImmediate(resolve))
    unlinkSync(path)
    expect(await waiting).toMatch(new RegExp(`^${process.pid} [0-9a-f]{24}\\n$`))
  })

  it("a holder that was taken over (slower than staleMs) does not remove the new holder's lock", async () => {
    const path = join(tempDir(), '.tasks.lock')
    const other = `${process.ppid} ffffffffffffffffffffffff\n`
    await withTaskLock(path, async () => {
      // Meanwhile another process judged this lock stale and took it over.
      writeFileSync(path, other)
    })
    expect(readFileSync(path, 'utf8')).toBe(other)
  })

  it('takes over a live holder whose lock is older than staleMs', async () => {
    const path = join(tempDir(), '.tasks.lock')
    writeFileSync(path, `${process.ppid}\n`)
    const old = new Date(Date.now() - 120_000)
    utimesSync(path, old, old)
    expect(await withTaskLock(path, async () => 'taken', { timeoutMs: 1_000, staleMs: 60_000 })).toBe('taken')
  })

  it('a lock file without a pid counts as held until it is stale', async () => {
    const path = join(tempDir(), '.tasks.lock')
    writeFileSync(path, '')
    expect((await schedulerErrorOf(withTaskLock(path, async () => 'x', { timeoutMs: 50 }))).code).toBe(
      'ERR_SCHEDULER_LOCKED',
    )
    const old = new Date(Date.now() - 10_000)
    utimesSync(path, old, old)
    expect(await withTaskLock(path, async () => 'x', { timeoutMs: 1_000, staleMs: 5_000 })).toBe('x')
  })

  it('a missing directory is ERR_SCHEDULER_CONFIG (run `sallyport init`), at once and without running the work', async () => {
    const root = tempDir()
    let ran = false
    const started = Date.now()
    const error = await schedulerErrorOf(
      withTaskLock(
        join(root, 'missing', '.tasks.lock'),
        async () => {
          ran = true
        },
        { timeoutMs: 5_000 },
      ),
    )
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toBe('config/akm/ is missing: run `sallyport init`')
    expect(ran).toBe(false)
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(readdirSync(root)).toEqual([])
  })

  it('a path under a regular file (not a directory) is ERR_SCHEDULER_IO', async () => {
    const file = join(tempDir(), 'file')
    writeFileSync(file, '')
    const error = await schedulerErrorOf(withTaskLock(join(file, '.tasks.lock'), async () => 'x'))
    expect(error.code).toBe('ERR_SCHEDULER_IO')
    expect(error.message).toBe('cannot take the task lock (ENOTDIR)')
  })
})
