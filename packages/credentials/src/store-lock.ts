import { randomBytes } from 'node:crypto'
import { link, readFile, rename, stat, unlink, utimes } from 'node:fs/promises'
import { hostname } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createFileExclusive, TEMP_PREFIX } from './atomic-write.ts'
import { CredentialError } from './errors.ts'
import { type LockFile, LockFileSchema } from './schemas.ts'

/** How long to wait for the lock and when a silent lock counts as abandoned. */
export interface LockOptions {
  /** Give up with `ERR_CREDENTIALS_LOCKED` after this long. */
  readonly timeoutMs: number
  /** A lock whose file was not touched for this long is stale, whoever holds it. */
  readonly staleMs: number
  /** Shown in the timeout message instead of the absolute lock path. */
  readonly displayPath: string
}

type Holder =
  | { state: 'gone' }
  | { state: 'live'; owner: LockFile | undefined }
  | { state: 'stale'; fingerprint: string }

// One chain per lock path: calls inside one process queue here instead of polling the file.
const inProcess = new Map<string, Promise<void>>()

function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function inspect(path: string, staleMs: number): Promise<Holder> {
  let text: string
  let mtimeMs: number
  let ino: number
  try {
    const info = await stat(path)
    mtimeMs = info.mtimeMs
    ino = info.ino
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'gone' }
    throw error
  }
  let owner: LockFile | undefined
  try {
    owner = LockFileSchema.parse(JSON.parse(text))
  } catch {
    owner = undefined // unreadable: only its age can tell whether it is abandoned
  }
  const fingerprint = owner?.token ?? `${ino}:${mtimeMs}`
  // A pid only means something on the host that wrote it (containers have their own pid space).
  // Our own pid cannot be a live holder: one acquirer per path per process (the chain below), so
  // it is a leftover of an earlier process that had the same pid (common after container restarts).
  const deadOwner =
    owner !== undefined &&
    owner.hostname === hostname() &&
    (owner.pid === process.pid || !pidIsAlive(owner.pid))
  if (deadOwner || Date.now() - mtimeMs > staleMs) return { state: 'stale', fingerprint }
  return { state: 'live', owner }
}

/**
 * Deletes the file at `path` only if `expected(aside)` says it is the one we mean to delete.
 * Reading `path` and then unlinking it could delete a lock someone created in between (we may be
 * paused for longer than `staleMs`), so the file is first renamed to a unique name and checked
 * there: the check and the delete are about the same file. If it is not the expected one it is
 * linked back. That is best effort: in the instant between the rename and the link another waiter
 * may find no lock and take it, and then the holder we moved loses its file (the link fails
 * rather than overwrite the new lock). Returns true if it deleted the file.
 */
async function removeIfExpected(path: string, expected: (aside: string) => Promise<boolean>) {
  // `.tmp-.lock…`: readers ignore it, and a writer's sweep removes it only once it is stale.
  const aside = join(
    dirname(path),
    `${TEMP_PREFIX}${basename(path)}-aside-${randomBytes(9).toString('base64url')}`,
  )
  try {
    await rename(path, aside)
  } catch {
    return false // gone already (or not movable): nothing of ours to delete
  }
  const ours = await expected(aside).catch(() => false)
  if (!ours) await link(aside, path).catch(() => {})
  await unlink(aside).catch(() => {})
  return ours
}

function holding(content: string): (aside: string) => Promise<boolean> {
  return async (aside) => (await readFile(aside, 'utf8')) === content
}

/**
 * Removes a stale lock. A second lock file (`.lock.break`) makes the check-and-delete exclusive,
 * so two waiters cannot both decide "stale" and delete a lock a third process just took.
 * Returns true if it removed the lock.
 */
async function breakStale(path: string, fingerprint: string, staleMs: number, content: string) {
  const breaker = `${path}.break`
  if (!(await createFileExclusive(breaker, content))) {
    const info = await stat(breaker).catch(() => undefined)
    if (info && Date.now() - info.mtimeMs > staleMs) {
      await removeIfExpected(breaker, async (aside) => Date.now() - (await stat(aside)).mtimeMs > staleMs)
    }
    return false
  }
  try {
    return await removeIfExpected(path, async (aside) => {
      const again = await inspect(aside, staleMs)
      return again.state === 'stale' && again.fingerprint === fingerprint
    })
  } finally {
    await removeIfExpected(breaker, holding(content))
  }
}

function lockedError(options: LockOptions, owner: LockFile | undefined): CredentialError {
  const who = owner ? ` by pid ${owner.pid} on ${owner.hostname} since ${owner.acquiredAt}` : ''
  return new CredentialError(
    'ERR_CREDENTIALS_LOCKED',
    `credential store is locked${who}; gave up after ${options.timeoutMs} ms ` +
      `(if no sallyport command is running, remove ${options.displayPath})`,
  )
}

async function acquire(path: string, options: LockOptions): Promise<() => Promise<void>> {
  const token = randomBytes(12).toString('base64url')
  const record: LockFile = {
    pid: process.pid,
    hostname: hostname(),
    token,
    acquiredAt: new Date().toISOString(),
  }
  const content = JSON.stringify(record)
  const deadline = Date.now() + options.timeoutMs
  let delay = 5
  let owner: LockFile | undefined
  for (let attempt = 0; ; attempt++) {
    // Every path through the loop comes back here: the timeout holds whatever the holder's state.
    if (attempt > 0 && Date.now() >= deadline) throw lockedError(options, owner)
    // The complete record is linked into place, so a reader never sees a half-written lock.
    if (await createFileExclusive(path, content)) break
    const holder = await inspect(path, options.staleMs)
    // Released meanwhile, or a stale lock we just removed: try again at once.
    if (holder.state === 'gone') continue
    owner = holder.state === 'live' ? holder.owner : undefined
    if (holder.state === 'stale' && (await breakStale(path, holder.fingerprint, options.staleMs, content))) {
      continue
    }
    // A live holder, or a stale one we could not break (another waiter is breaking it): back off.
    const remaining = deadline - Date.now()
    if (remaining <= 0) throw lockedError(options, owner)
    await sleep(Math.min(remaining, delay + Math.random() * delay))
    delay = Math.min(delay * 2, 100)
  }
  // Heartbeat: a holder that is alive keeps its lock fresh, so only an abandoned one goes stale.
  const heartbeat = setInterval(
    () => {
      const now = new Date()
      utimes(path, now, now).catch(() => {})
    },
    Math.max(10, Math.floor(options.staleMs / 3)),
  )
  heartbeat.unref()
  return async () => {
    clearInterval(heartbeat)
    // Only delete our own lock: if it was broken as stale meanwhile, it belongs to someone else.
    await removeIfExpected(path, holding(content))
  }
}

/**
 * Runs `fn` while holding the store-wide lock file at `path` (created with O_EXCL, holding pid,
 * host and a random token). Waits with bounded backoff; a lock whose owner died on this host, or
 * that nobody touched for `staleMs`, is broken. Throws `ERR_CREDENTIALS_LOCKED` on timeout.
 */
export async function withStoreLock<T>(path: string, options: LockOptions, fn: () => Promise<T>): Promise<T> {
  const previous = inProcess.get(path) ?? Promise.resolve()
  let settle: () => void = () => {}
  const mine = new Promise<void>((resolve) => {
    settle = resolve
  })
  // Tails only ever resolve, so one failed mutation never blocks the next.
  const tail = previous.then(() => mine)
  inProcess.set(path, tail)
  try {
    await previous
    const release = await acquire(path, options)
    try {
      return await fn()
    } finally {
      await release()
    }
  } finally {
    settle()
    if (inProcess.get(path) === tail) inProcess.delete(path)
  }
}
