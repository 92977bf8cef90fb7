import { randomBytes } from 'node:crypto'
import { chmod, link, lstat, mkdir, open, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/**
 * Creates `path` with `content` and `mode` unless something already exists there. The file is
 * written completely under a temporary name and then hard-linked into place, so a reader never
 * sees a partial file and two concurrent callers cannot both create it (nor overwrite each
 * other). Returns true if this call created the file.
 */
export async function createFileExclusive(
  path: string,
  content: string | Uint8Array,
  mode: number,
): Promise<boolean> {
  if (await exists(path)) return false
  return withWritableParent(path, async () => {
    const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
    const handle = await open(temp, 'wx', mode)
    try {
      await handle.writeFile(content)
      await handle.chmod(mode) // the umask may have narrowed `mode` at open
      await handle.sync()
    } finally {
      await handle.close()
    }
    try {
      await link(temp, path)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
      throw error
    } finally {
      await unlink(temp).catch(() => {})
    }
  })
}

/** Creates the directory `path` (parents must exist) with `mode`. Returns true if it created it. */
export async function createDirExclusive(path: string, mode: number): Promise<boolean> {
  if (await exists(path)) return false
  return withWritableParent(path, async () => {
    try {
      await mkdir(path, { mode })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
      throw error
    }
    await chmod(path, mode)
    return true
  })
}

/** True when anything (also a dangling link) exists at `path`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

/**
 * Runs `action`, first making a read-only parent directory writable for its owner when that is
 * what stands in the way (managed directories are 0555), and restoring its mode afterwards.
 */
async function withWritableParent<T>(path: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EACCES') throw error
    const parent = dirname(path)
    const info = await stat(parent)
    if (typeof process.getuid === 'function' && info.uid !== process.getuid()) throw error
    const mode = info.mode & 0o7777
    await chmod(parent, mode | 0o200)
    try {
      return await action()
    } finally {
      await chmod(parent, mode)
    }
  }
}
