import { randomUUID } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { assertReachable } from './check-access.ts'
import type { ProcessUser } from './sandbox.ts'

/**
 * Returns a path of `binary` that `user` can execute. Normally that is `binary` itself; when a
 * directory on its way is closed to the user (a checkout under `/root`, say), the binary is
 * hard-linked (or, across file systems or when the file is not world-executable, copied) once into
 * `<parent>/agentgate-opencode-<size>-<mtime>/` and that cached path is reused by later runs.
 */
export function stageBinaryFor(binary: string, user: ProcessUser, parent: string): string {
  try {
    assertReachable(dirname(binary), user, 'opencode binary')
    return binary
  } catch {
    // fall through: stage a reachable copy
  }
  const source = statSync(binary)
  const dir = join(parent, `agentgate-opencode-${source.size}-${Math.floor(source.mtimeMs)}`)
  const target = join(dir, basename(binary))
  if (existsSync(target) && statSync(target).size === source.size) return target
  mkdirSync(dir, { recursive: true })
  chmodSync(dir, 0o755)
  const partial = `${target}.${randomUUID()}.partial`
  const worldExecutable = (Number(source.mode) & 0o005) === 0o005
  try {
    if (!worldExecutable) throw new Error('copy instead: a hard link shares the restrictive mode')
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
