import type { Stats } from 'node:fs'
import { constants } from 'node:fs'
import { type FileHandle, open, readlink, realpath, stat } from 'node:fs/promises'
import { componentsInsideRoot } from './canonicalise.ts'
import { isAllowedComponents } from './check-path.ts'
import { denied, GuardError } from './errors.ts'

// O_NOFOLLOW: a final symlink (swapped in after the checks) fails with ELOOP instead of being
// followed. O_NONBLOCK: opening a FIFO without a writer returns at once instead of hanging the
// server. O_NOCTTY: a terminal device never becomes our controlling terminal.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY

/** An opened descriptor and what `fstat` said about it. */
export interface SafeFile {
  readonly handle: FileHandle
  readonly stats: Stats
}

/** Opens without following a final symlink and without blocking; any failure is denied. */
export async function openSafe(absolutePath: string): Promise<SafeFile> {
  let handle: FileHandle
  try {
    handle = await open(absolutePath, OPEN_FLAGS)
  } catch {
    // Callers open a path they just canonicalised, so a failure here (ELOOP: a symlink swapped
    // in; ENOENT: a directory swapped for a link elsewhere) is a race: deny, and attach no
    // `cause` (Node's fs errors carry the absolute path).
    throw denied()
  }
  try {
    return { handle, stats: await handle.stat() }
  } catch {
    await handle.close().catch(() => undefined)
    throw denied()
  }
}

function isAllowedLocation(root: string, absolute: string): boolean {
  const components = componentsInsideRoot(root, absolute)
  return components !== undefined && isAllowedComponents(components)
}

/**
 * Proves that the opened file is inside the root and allowed by the rules: the canonical path
 * (realpath, now) AND the descriptor itself (`/proc/self/fd/N`, which names the inode we really
 * opened even if the path was swapped in between). Without /proc, the descriptor's device and
 * inode must equal those of the canonical path. Throws the fixed denial otherwise.
 */
export async function verifyLocation(root: string, openedPath: string, file: SafeFile): Promise<void> {
  let canonical: string
  try {
    canonical = await realpath(openedPath)
  } catch {
    throw denied()
  }
  if (!isAllowedLocation(root, canonical)) throw denied()
  let target: string | undefined
  try {
    target = await readlink(`/proc/self/fd/${file.handle.fd}`)
  } catch {
    target = undefined
  }
  if (target !== undefined) {
    // A descriptor whose file was unlinked reads "<path> (deleted)": that name proves nothing.
    if (target.endsWith(' (deleted)') || !isAllowedLocation(root, target)) throw denied()
    return
  }
  let current: Stats
  try {
    current = await stat(canonical)
  } catch {
    throw denied()
  }
  if (current.dev !== file.stats.dev || current.ino !== file.stats.ino) throw denied()
}

/**
 * Refuses what `read` must never return: anything but a regular file (a directory is "not found",
 * a FIFO, socket or device is denied), a file with more than one hard link (the other names may
 * be outside the root or denied), a file whose size is over the cap.
 */
export function assertReadableFile(stats: Stats, maxBytes: number): void {
  if (stats.isDirectory()) throw new GuardError('ERR_GUARD_NOT_FOUND')
  if (!stats.isFile() || stats.nlink !== 1) throw denied()
  if (stats.size > maxBytes) throw new GuardError('ERR_GUARD_TOO_LARGE')
}

/**
 * Reads at most `limit` bytes from the descriptor, never the whole file. Callers pass
 * `min(size, maxBytes) + 1`: one byte more than expected is enough to know that the file is
 * larger than `fstat` said (a pseudo-file, or a file growing under us), whatever its real size.
 */
export async function readBounded(handle: FileHandle, limit: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(limit)
  let filled = 0
  while (filled < limit) {
    const { bytesRead } = await handle.read(buffer, filled, limit - filled, filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return buffer.subarray(0, filled)
}

/** The read limit for a file `fstat` described: its size (at most the cap) plus one byte. */
export function readLimit(stats: Stats, maxBytes: number): number {
  return Math.min(stats.size, maxBytes) + 1
}

/**
 * Checks what was read against what `fstat` said: more than the cap is too large; more than the
 * reported size is a pseudo-file (procfs and sysfs report 0 or 4096) or a file changing under us,
 * and is denied rather than returned half-verified.
 */
export function assertReadMatchesStats(bytes: Buffer, stats: Stats, maxBytes: number): void {
  if (bytes.length > maxBytes) throw new GuardError('ERR_GUARD_TOO_LARGE')
  if (bytes.length > stats.size) throw denied()
}

/**
 * The whole safe read of one already canonicalised path: open (no final symlink, non-blocking),
 * fstat, verify canonical path and descriptor are inside the root and allowed, refuse non-regular
 * and hard-linked files and files over the cap, read at most cap + 1 bytes. Content is not yet
 * classified (see read-file.ts). The descriptor is always closed.
 */
export async function readSafeFile(root: string, absolutePath: string, maxBytes: number): Promise<Buffer> {
  const file = await openSafe(absolutePath)
  try {
    // Location first: an error about size or type must not describe a file outside the root.
    await verifyLocation(root, absolutePath, file)
    assertReadableFile(file.stats, maxBytes)
    const bytes = await readBounded(file.handle, readLimit(file.stats, maxBytes))
    assertReadMatchesStats(bytes, file.stats, maxBytes)
    return bytes
  } finally {
    await file.handle.close().catch(() => undefined)
  }
}
