import { randomBytes } from 'node:crypto'
import { chmod, link, mkdir, open, rename, rm, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** Prefix of every temporary entry; readers skip names that start with a dot. */
export const TEMP_PREFIX = '.tmp-'

function tempName(dir: string, base: string): string {
  // Always OS randomness: an injected deterministic source must not make two writers collide.
  return join(dir, `${TEMP_PREFIX}${base}-${randomBytes(9).toString('base64url')}`)
}

/** Creates `dir` (and parents) and forces mode 0700 on it whatever the umask. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  await chmod(dir, 0o700)
}

/** Flushes a directory entry table, so a completed rename survives a crash. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function writeNewFile(path: string, data: string | Uint8Array, mode: number): Promise<void> {
  // O_EXCL: never follow or reuse an existing entry, even a planted symlink.
  const handle = await open(path, 'wx', mode)
  try {
    await handle.chmod(mode)
    await handle.writeFile(data)
    await handle.sync()
  } catch (error) {
    // A write through a handle names no file: name it, so the message can say which.
    const errno = error as NodeJS.ErrnoException
    if (errno.code !== undefined && errno.path === undefined) errno.path = path
    throw error
  } finally {
    await handle.close()
  }
}

/**
 * Writes `data` to a new temporary file next to `path` (O_EXCL, `mode`, fsynced) and returns the
 * temporary file's path; renaming it over `path` is the caller's step. Removes the temporary file
 * again when the write fails (a full disk, say): nothing is left behind.
 */
export async function writeTempFile(path: string, data: string | Uint8Array, mode = 0o600): Promise<string> {
  const temp = tempName(dirname(path), basename(path))
  try {
    await writeNewFile(temp, data, mode)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
  return temp
}

/**
 * Writes `files` into a new temporary directory (mode 0700) next to `target`, fsynced, and
 * returns its path; renaming it to `target` is the caller's step. Removes it again when a write
 * fails.
 */
export async function writeTempDir(
  target: string,
  files: Readonly<Record<string, string>>,
  mode = 0o600,
): Promise<string> {
  const temp = tempName(dirname(target), basename(target))
  try {
    await mkdir(temp, { mode: 0o700 })
    await chmod(temp, 0o700)
    for (const [name, data] of Object.entries(files)) await writeNewFile(join(temp, name), data, mode)
    await fsyncDir(temp)
  } catch (error) {
    await rm(temp, { recursive: true, force: true }).catch(() => {})
    throw error
  }
  return temp
}

/** A unique temporary name next to `path` to move it aside to (a directory being removed). */
export function asideName(path: string, tag: string): string {
  return tempName(dirname(path), `${basename(path)}-${tag}`)
}

/**
 * The store-relative name a temporary entry stands for (`.tmp-key-AbC…` → `key`,
 * `.tmp-alice-AbC…/key` → `alice/key`), so messages name the file the operator knows.
 */
export function withoutTempNames(path: string): string {
  return path
    .split('/')
    .map((part) => {
      if (!part.startsWith(TEMP_PREFIX)) return part
      const base = part.slice(TEMP_PREFIX.length).replace(/-[A-Za-z0-9_-]{12}$/, '')
      return base.replace(/-(removed|aside)$/, '')
    })
    .join('/')
}

/**
 * Replaces `path` atomically: a temporary file in the same directory is written, fsynced and
 * renamed over the target, then the directory is fsynced. Readers see the old or the new
 * content, never a mix.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const temp = await writeTempFile(path, data, mode)
  try {
    await rename(temp, path)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
  await fsyncDir(dirname(path))
}

/**
 * Creates `path` with `data` only if nothing exists there, atomically: the complete file is
 * linked into place, so a reader never sees a partial file. Returns false if `path` existed.
 */
export async function createFileExclusive(
  path: string,
  data: string | Uint8Array,
  mode = 0o600,
): Promise<boolean> {
  const dir = dirname(path)
  const temp = tempName(dir, basename(path))
  try {
    await writeNewFile(temp, data, mode)
    await link(temp, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    await unlink(temp).catch(() => {})
  }
  await fsyncDir(dir)
  return true
}

/**
 * Creates directory `target` (mode 0700) holding `files` in one step: they are written into a
 * temporary sibling directory which is then renamed to `target`. Fails if `target` exists and is
 * not empty.
 */
export async function createDirAtomic(
  target: string,
  files: Readonly<Record<string, string>>,
  mode = 0o600,
): Promise<void> {
  const temp = await writeTempDir(target, files, mode)
  try {
    await rename(temp, target)
  } catch (error) {
    await rm(temp, { recursive: true, force: true }).catch(() => {})
    throw error
  }
  await fsyncDir(dirname(target))
}

/** Removes directory `target` atomically: renamed away first, then deleted. */
export async function removeDirAtomic(target: string): Promise<void> {
  const trash = asideName(target, 'removed')
  await rename(target, trash)
  await fsyncDir(dirname(target))
  await rm(trash, { recursive: true, force: true })
}
