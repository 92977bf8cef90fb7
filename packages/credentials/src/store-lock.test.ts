import { spawnSync } from 'node:child_process'
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, tempStateDir } from '../test/helpers.ts'
import { CredentialError } from './errors.ts'
import { withStoreLock } from './store-lock.ts'

async function lockDir(): Promise<string> {
  const dir = await tempStateDir()
  await mkdir(dir, { recursive: true })
  return dir
}

const options = { timeoutMs: 300, staleMs: 5_000, displayPath: 'credentials/.lock' }

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
  return Number(child.stdout.toString())
}

function lockRecord(pid: number, host = hostname()): string {
  return JSON.stringify({ pid, hostname: host, token: 'someone-else', acquiredAt: new Date().toISOString() })
}

describe('withStoreLock', () => {
  it('holds a lock file with pid and host while running and removes it after', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    const seen = await withStoreLock(path, options, async () => JSON.parse(await readFile(path, 'utf8')))
    expect(seen).toMatchObject({ pid: process.pid, hostname: hostname() })
    expect(await readdir(dir)).toEqual([])
  })

  it('releases the lock when the work throws', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    await expect(
      withStoreLock(path, options, async () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await readdir(dir)).toEqual([])
  })

  it('serialises work inside one process', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    let active = 0
    let maxActive = 0
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withStoreLock(path, options, async () => {
          active++
          maxActive = Math.max(maxActive, active)
          await new Promise((resolve) => setImmediate(resolve))
          active--
        }),
      ),
    )
    expect(maxActive).toBe(1)
  })

  it('times out with ERR_CREDENTIALS_LOCKED while a live process holds the lock', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    const record = lockRecord(process.ppid)
    await writeFile(path, record)
    const started = Date.now()
    let error: unknown
    try {
      await withStoreLock(path, options, async () => {})
    } catch (caught) {
      error = caught
    }
    expect(CredentialError.isInstance(error) && error.code).toBe('ERR_CREDENTIALS_LOCKED')
    expect((error as Error).message).toContain(`pid ${process.ppid}`)
    expect((error as Error).message).toContain('credentials/.lock')
    expect(Date.now() - started).toBeGreaterThanOrEqual(options.timeoutMs - 20)
    expect(await readFile(path, 'utf8')).toBe(record)
  })

  it('gives up within roughly timeoutMs while a live process holds the lock', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    await writeFile(path, lockRecord(process.ppid))
    const short = { ...options, timeoutMs: 120 }
    const started = Date.now()
    expect(await codeOf(() => withStoreLock(path, short, async () => {}))).toBe('ERR_CREDENTIALS_LOCKED')
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(short.timeoutMs - 20)
    expect(elapsed).toBeLessThan(short.timeoutMs + 400)
  })

  it('honours timeoutMs, without spinning, while another waiter is breaking a stale lock', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    // The owner is dead (stale lock), but another waiter holds the fresh break lock: we must
    // neither break the lock ourselves nor busy-loop until the break lock itself goes stale.
    await writeFile(path, lockRecord(deadPid()))
    await writeFile(`${path}.break`, lockRecord(process.ppid))
    const started = Date.now()
    expect(await codeOf(() => withStoreLock(path, options, async () => {}))).toBe('ERR_CREDENTIALS_LOCKED')
    expect(Date.now() - started).toBeLessThan(options.timeoutMs + 400)
    expect(await readFile(path, 'utf8')).toContain('someone-else')
  })

  it('breaks a lock whose owner process on this host is dead', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    await writeFile(path, lockRecord(deadPid()))
    await expect(withStoreLock(path, options, async () => 'ran')).resolves.toBe('ran')
    expect(await readdir(dir)).toEqual([])
  })

  it('breaks a lock left by an earlier process that had our pid', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    await writeFile(path, lockRecord(process.pid))
    await expect(withStoreLock(path, options, async () => 'ran')).resolves.toBe('ran')
  })

  it('breaks a lock from another host only once it is older than staleMs', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    await writeFile(path, lockRecord(1, 'some-other-host'))
    expect(await codeOf(() => withStoreLock(path, options, async () => {}))).toBe('ERR_CREDENTIALS_LOCKED')
    const old = new Date(Date.now() - options.staleMs - 1_000)
    await utimes(path, old, old)
    await expect(withStoreLock(path, options, async () => 'ran')).resolves.toBe('ran')
  })

  it('breaks an unreadable lock file once it is stale', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    await writeFile(path, 'half-writ')
    expect(await codeOf(() => withStoreLock(path, options, async () => {}))).toBe('ERR_CREDENTIALS_LOCKED')
    const old = new Date(Date.now() - options.staleMs - 1_000)
    await utimes(path, old, old)
    await expect(withStoreLock(path, options, async () => 'ran')).resolves.toBe('ran')
  })

  it('keeps its own lock fresh while working, so waiters do not break it', async () => {
    const dir = await lockDir()
    const path = join(dir, '.lock')
    const quick = { ...options, staleMs: 150, timeoutMs: 5_000 }
    const mtimes: number[] = []
    await withStoreLock(path, quick, async () => {
      for (let i = 0; i < 6; i++) {
        await new Promise((resolve) => setTimeout(resolve, 60))
        mtimes.push((await stat(path)).mtimeMs)
      }
    })
    expect(new Set(mtimes).size).toBeGreaterThan(1)
  })
})
