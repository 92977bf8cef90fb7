import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { CliError } from '../errors.ts'
import { createFileExclusive } from './create-exclusive.ts'

/** A new random password for a native server's HTTP Basic auth (256 bits, base64url). */
export function newPassword(): string {
  return randomBytes(32).toString('base64url')
}

/** Creates a password file (0600) unless it exists. Returns true if created now. */
export function ensurePasswordFile(path: string): Promise<boolean> {
  return createFileExclusive(path, `${newPassword()}\n`, 0o600)
}

/**
 * Reads a password file: a regular file (no link), not readable by group or others, one
 * non-empty line. Throws `ERR_CLI_STACK_MISSING` or `ERR_CLI_IO` naming `shownAs` only.
 */
export async function readPasswordFile(path: string, shownAs: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT')
      throw new CliError('ERR_CLI_STACK_MISSING', `${shownAs} is missing: run \`sallyport init\``)
    throw new CliError('ERR_CLI_IO', `cannot open ${shownAs} (${code ?? 'unknown error'})`)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new CliError('ERR_CLI_IO', `${shownAs} must be a regular file`)
    if ((info.mode & 0o077) !== 0) {
      throw new CliError('ERR_CLI_IO', `${shownAs} is accessible by group or others: chmod 600 it`)
    }
    const text = (await handle.readFile('utf8')).trim()
    if (text.length === 0 || /\s/.test(text))
      throw new CliError('ERR_CLI_IO', `${shownAs} must hold one password`)
    return text
  } finally {
    await handle.close()
  }
}
