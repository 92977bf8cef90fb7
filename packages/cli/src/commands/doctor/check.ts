import { lstat } from 'node:fs/promises'

/** One finding of `doctor`. */
export interface Check {
  readonly name: string
  readonly status: 'ok' | 'warn' | 'fail'
  readonly detail: string
  /** What to do about a warning or failure. */
  readonly fix?: string
}

/** A {@link Check}; `fix` only when given. */
export function check(name: string, status: Check['status'], detail: string, fix?: string): Check {
  return { name, status, detail, ...(fix ? { fix } : {}) }
}

/** What is at `path` (without following a link), or `undefined` when nothing is. */
export async function kindOf(path: string): Promise<'file' | 'dir' | 'link' | 'other' | undefined> {
  try {
    const info = await lstat(path)
    if (info.isSymbolicLink()) return 'link'
    if (info.isDirectory()) return 'dir'
    return info.isFile() ? 'file' : 'other'
  } catch {
    return undefined
  }
}
