import { randomUUID } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
} from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { assertReachable } from './check-access.ts'
import type { ProcessUser } from './sandbox.ts'

/**
 * Returns a path of `binary` that `user` can execute. Normally that is `binary` itself; when a
 * directory on its way is closed to the user (a checkout under `/root`, say), the binary is
 * hard-linked (or, across file systems, when the file is not world-executable or not owned by this
 * process's user, copied) once into `<parent>/sallyport-opencode-<size>-<mtime>/` and that cached
 * path is reused by later runs.
 *
 * The cache name is predictable, so another local user could create it first and have the harness
 * run their file (as root, the runtime user would execute it). The cache is therefore used only
 * while the directory and the file are this process's user's own (lstat: no symlinks) and not
 * writable by group or others; otherwise the binary is staged into a fresh `mkdtemp` directory.
 */
export function stageBinaryFor(binary: string, user: ProcessUser, parent: string): string {
  try {
    assertReachable(dirname(binary), user, 'opencode binary')
    return binary
  } catch {
    // fall through: stage a reachable copy
  }
  const source = statSync(binary)
  const prefix = join(parent, `sallyport-opencode-${source.size}-${Math.floor(source.mtimeMs)}`)
  const name = basename(binary)
  let dir = prefix
  if (!createOwnDir(dir)) {
    if (!isOwnPrivate(lstatOrUndefined(dir), 'directory')) {
      dir = mkdtempSync(`${prefix}-`)
    } else {
      const cached = lstatOrUndefined(join(dir, name))
      if (
        isOwnPrivate(cached, 'file') &&
        cached.size === source.size &&
        (Number(cached.mode) & 0o005) === 0o005
      ) {
        return join(dir, name)
      }
    }
  }
  chmodSync(dir, 0o755)
  const target = join(dir, name)
  const partial = `${target}.${randomUUID()}.partial`
  // A hard link shares the source's owner and mode: only link a file that is ours, not writable
  // by others and world-executable; copy anything else.
  const linkable = isOwnPrivate(source, 'file') && (Number(source.mode) & 0o005) === 0o005
  try {
    if (!linkable) throw new Error('copy instead: a hard link would share the owner and mode')
    linkSync(binary, partial)
  } catch {
    copyFileSync(binary, partial)
    chmodSync(partial, 0o755)
  }
  try {
    renameSync(partial, target) // atomic: concurrent workers never see a half-written file
  } catch (error) {
    rmSync(partial, { force: true })
    throw error
  }
  return target
}

/** Creates `dir` (0700 until staged into); false when something exists at that path already. */
function createOwnDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/** A real directory / regular file (not a symlink) owned by this process's user, not group/other-writable. */
function isOwnPrivate(stat: Stats | undefined, kind: 'directory' | 'file'): stat is Stats {
  if (!stat) return false
  if (kind === 'directory' ? !stat.isDirectory() : !stat.isFile()) return false
  return Number(stat.uid) === process.getuid?.() && (Number(stat.mode) & 0o022) === 0
}
