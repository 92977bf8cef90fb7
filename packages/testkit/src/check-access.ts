import { statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { ProcessUser } from './sandbox.ts'

/**
 * Throws an `Error` naming the first directory on the way to `path` that `user` may not search
 * (execute), so a runtime started as an unprivileged user fails with a clear message instead of
 * `spawn EACCES` or a runtime that cannot open its workspace. Ancestors that do not exist are
 * skipped (they fail later with their own error).
 */
export function assertReachable(path: string, user: ProcessUser, what: string): void {
  let dir = resolve(path)
  const chain: string[] = []
  for (;;) {
    chain.unshift(dir)
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  for (const ancestor of chain) {
    let stat: ReturnType<typeof statSync>
    try {
      stat = statSync(ancestor)
    } catch {
      continue
    }
    if (!stat.isDirectory()) continue
    const mode = Number(stat.mode)
    const searchable =
      Number(stat.uid) === user.uid
        ? (mode & 0o100) !== 0
        : Number(stat.gid) === user.gid
          ? (mode & 0o010) !== 0
          : (mode & 0o001) !== 0
    if (!searchable) {
      throw new Error(
        `testkit: the runtime runs as uid ${user.uid}, which cannot reach the ${what} ${path}: ` +
          `${ancestor} is not searchable for it (chmod o+x, or pass user: 'current')`,
      )
    }
  }
}
