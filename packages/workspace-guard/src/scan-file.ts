import { join } from 'node:path'
import { isAllowedComponents } from './check-path.ts'
import { decodeText } from './read-file.ts'
import {
  assertReadableFile,
  assertReadMatchesStats,
  openSafe,
  readBounded,
  readLimit,
  type SafeFile,
  verifyLocation,
} from './safe-file.ts'

/**
 * Looks at one search candidate with the same checks as `read`, and hands its text to `inspect`.
 * Returns what `inspect` found, or undefined when the file is refused for any reason (denied,
 * not a regular file, hard-linked, over the cap, binary, not UTF-8, holds a private key, outside
 * the root) or nothing was found. Never throws.
 *
 * The location proof (canonical path and descriptor inside the root) runs only when something
 * was found: until then nothing about the file leaves this function, and skipping two syscalls
 * per non-matching file is what keeps the built-in engine usable on large trees.
 */
export async function scanFile<T>(
  root: string,
  relative: string,
  maxBytes: number,
  inspect: (text: string) => T[],
): Promise<T[] | undefined> {
  if (!isAllowedComponents(relative.split('/'))) return undefined
  const absolute = join(root, relative)
  let file: SafeFile
  try {
    file = await openSafe(absolute)
  } catch {
    return undefined
  }
  try {
    // The same file checks as `read` (safe-file.ts); a refusal throws and becomes undefined.
    const { stats } = file
    assertReadableFile(stats, maxBytes)
    const bytes = await readBounded(file.handle, readLimit(stats, maxBytes))
    assertReadMatchesStats(bytes, stats, maxBytes)
    const found = inspect(decodeText(bytes))
    if (found.length === 0) return undefined
    await verifyLocation(root, absolute, file)
    return found
  } catch {
    return undefined
  } finally {
    await file.handle.close().catch(() => undefined)
  }
}
