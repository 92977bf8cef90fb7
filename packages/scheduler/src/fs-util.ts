import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { chmod, open, readFile, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { SchedulerError } from './errors.ts'

/**
 * Writes `text` to `path` atomically: a temporary file beside it (created exclusively, never
 * following a symlink), flushed, then renamed over the target. A reader sees the old or the new
 * file, never a part. `mode` defaults to the target's current mode, else 0600.
 */
export async function writeFileAtomic(path: string, text: string, mode?: number): Promise<void> {
  const finalMode =
    mode ??
    (await stat(path).then(
      (s) => s.mode & 0o7777,
      () => 0o600,
    ))
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  )
  try {
    await handle.writeFile(text, 'utf8')
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await chmod(temp, finalMode)
    await rename(temp, path)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}

/**
 * Reads a regular file of at most `maxBytes` without following a final symlink. Returns undefined
 * when it does not exist; throws `ERR_SCHEDULER_IO` for a symlink, a non-file or a larger file.
 */
export async function readSmallFile(path: string, maxBytes: number): Promise<Buffer | undefined> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') throw new SchedulerError('ERR_SCHEDULER_IO', `${basename(path)} is a symbolic link`)
    throw new SchedulerError('ERR_SCHEDULER_IO', `cannot read ${basename(path)} (${code ?? 'error'})`, {
      cause: error,
    })
  }
  try {
    const info = await handle.stat()
    if (!info.isFile())
      throw new SchedulerError('ERR_SCHEDULER_IO', `${basename(path)} is not a regular file`)
    if (info.size > maxBytes)
      throw new SchedulerError('ERR_SCHEDULER_INVALID_TASK', `larger than ${maxBytes} bytes`)
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1)
    let length = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length)
      if (bytesRead === 0) break
      length += bytesRead
      if (length > maxBytes)
        throw new SchedulerError('ERR_SCHEDULER_INVALID_TASK', `larger than ${maxBytes} bytes`)
    }
    return buffer.subarray(0, length)
  } finally {
    await handle.close()
  }
}

/** Reads a UTF-8 file, or undefined when it does not exist. */
export async function readTextIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}
