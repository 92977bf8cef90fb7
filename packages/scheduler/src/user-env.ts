import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { SchedulerError } from './errors.ts'

/** Largest `user.env` read. */
export const MAX_USER_ENV_BYTES = 64 * 1024
/** Variables a user environment may not set: they would change how the command itself runs. */
const REFUSED_NAMES =
  /^(?:PATH|HOME|SHELL|USER|LOGNAME|IFS|ENV|BASH_ENV|NODE_OPTIONS|LD_[A-Z_]*|DYLD_[A-Z_]*|OPENCODE_[A-Z0-9_]*|SALLYPORT_[A-Z0-9_]*)$/

/**
 * Parses `knowledge/env/user.env`: `NAME=value` lines, `#` comments, blank lines, an optional
 * `export ` prefix, values optionally in single quotes (literal) or double quotes (`\n`, `\"`,
 * `\\` escapes). Throws `ERR_SCHEDULER_CONFIG` naming the line number (never its value).
 */
export function parseUserEnv(text: string): Map<string, string> {
  const out = new Map<string, string>()
  const lines = text.split(/\r?\n/)
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (!match?.[1])
      throw new SchedulerError('ERR_SCHEDULER_CONFIG', `user.env line ${index + 1}: expected NAME=value`)
    const name = match[1]
    if (REFUSED_NAMES.test(name))
      throw new SchedulerError(
        'ERR_SCHEDULER_CONFIG',
        `user.env line ${index + 1}: ${name} may not be set from user.env`,
      )
    out.set(name, unquote(match[2] ?? '', index + 1))
  }
  return out
}

function unquote(value: string, line: number): string {
  const v = value.trim()
  if (v.startsWith("'")) {
    if (!v.endsWith("'") || v.length < 2)
      throw new SchedulerError('ERR_SCHEDULER_CONFIG', `user.env line ${line}: unterminated quote`)
    return v.slice(1, -1)
  }
  if (v.startsWith('"')) {
    if (!v.endsWith('"') || v.length < 2)
      throw new SchedulerError('ERR_SCHEDULER_CONFIG', `user.env line ${line}: unterminated quote`)
    return v.slice(1, -1).replace(/\\([n"\\])/g, (_, c: string) => (c === 'n' ? '\n' : c))
  }
  const hash = v.search(/\s#/)
  return hash >= 0 ? v.slice(0, hash).trimEnd() : v
}

/**
 * Reads the user environment file: a regular file (no symlink) owned by this user and readable by
 * no one else, at most 64 KiB. Throws `ERR_SCHEDULER_NOT_FOUND` when missing.
 */
export async function readUserEnv(path: string): Promise<Map<string, string>> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT')
      throw new SchedulerError('ERR_SCHEDULER_NOT_FOUND', 'knowledge/env/user.env does not exist')
    if (code === 'ELOOP')
      throw new SchedulerError('ERR_SCHEDULER_IO', 'knowledge/env/user.env is a symbolic link')
    throw new SchedulerError('ERR_SCHEDULER_IO', `cannot read knowledge/env/user.env (${code ?? 'error'})`)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile())
      throw new SchedulerError('ERR_SCHEDULER_IO', 'knowledge/env/user.env is not a regular file')
    if (typeof process.getuid === 'function' && info.uid !== process.getuid())
      throw new SchedulerError('ERR_SCHEDULER_IO', 'knowledge/env/user.env belongs to another user')
    if ((info.mode & 0o077) !== 0)
      throw new SchedulerError(
        'ERR_SCHEDULER_IO',
        'knowledge/env/user.env is readable by others: chmod 600 it',
      )
    if (info.size > MAX_USER_ENV_BYTES)
      throw new SchedulerError(
        'ERR_SCHEDULER_IO',
        `knowledge/env/user.env is larger than ${MAX_USER_ENV_BYTES} bytes`,
      )
    return parseUserEnv(await handle.readFile('utf8'))
  } finally {
    await handle.close()
  }
}
