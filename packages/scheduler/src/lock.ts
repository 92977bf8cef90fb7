import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { open, readFile, stat, unlink } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { isProcessAlive } from '@sallyport/runtime-process'
import { SchedulerError } from './errors.ts'

/** How long a mutation waits for the task lock, and when a held lock counts as abandoned. */
export interface TaskLockOptions {
  readonly timeoutMs?: number
  readonly staleMs?: number
}

const inProcess = new Map<string, Promise<unknown>>()

/**
 * Runs `work` while holding the task lock (`config/akm/.tasks.lock`), so that the CLI, the
 * assistant's task tools and the scheduler never interleave their read-modify-write cycles. A
 * lock whose holder process is gone, or that is older than `staleMs` (default 60 s), is taken
 * over; after `timeoutMs` (default 10 s) of waiting, `ERR_SCHEDULER_LOCKED`.
 */
export async function withTaskLock<T>(
  path: string,
  work: () => Promise<T>,
  options: TaskLockOptions = {},
): Promise<T> {
  const previous = inProcess.get(path) ?? Promise.resolve()
  const run = previous.catch(() => {}).then(() => lockedRun(path, work, options))
  inProcess.set(path, run)
  try {
    return await run
  } finally {
    if (inProcess.get(path) === run) inProcess.delete(path)
  }
}

async function lockedRun<T>(path: string, work: () => Promise<T>, options: TaskLockOptions): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000
  const staleMs = options.staleMs ?? 60_000
  const deadline = Date.now() + timeoutMs
  // The holder's pid and a token of this acquisition: released only while it is still ours.
  const mine = `${process.pid} ${randomBytes(12).toString('hex')}\n`
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    try {
      const handle = await open(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      )
      try {
        await handle.writeFile(mine)
      } finally {
        await handle.close()
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new SchedulerError('ERR_SCHEDULER_CONFIG', 'config/akm/ is missing: run `sallyport init`')
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new SchedulerError(
          'ERR_SCHEDULER_IO',
          `cannot take the task lock (${(error as NodeJS.ErrnoException).code})`,
          {
            cause: error,
          },
        )
    }
    const stale = await staleContent(path, staleMs)
    if (stale !== undefined) {
      // Taken over only if it is still the abandoned lock that was judged (not a fresh one of
      // another waiter that took it over first).
      if ((await readFile(path, 'utf8').catch(() => undefined)) === stale) await unlink(path).catch(() => {})
      continue
    }
    if (Date.now() >= deadline)
      throw new SchedulerError('ERR_SCHEDULER_LOCKED', 'another task change is in progress; try again')
    await sleep(delay)
  }
  try {
    return await work()
  } finally {
    // A holder slower than `staleMs` may have been taken over: never remove the next one's lock.
    if ((await readFile(path, 'utf8').catch(() => undefined)) === mine) await unlink(path).catch(() => {})
  }
}

/** The lock file's content when its holder is gone (or it is older than `staleMs`), else undefined. */
async function staleContent(path: string, staleMs: number): Promise<string | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)])
    const pid = Number.parseInt(text, 10)
    if (Number.isInteger(pid) && pid > 0 && (pid === process.pid || !isProcessAlive(pid))) return text
    return Date.now() - info.mtimeMs > staleMs ? text : undefined
  } catch {
    return undefined
  }
}
