import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { createFileExclusive, ensurePrivateDir } from './atomic-write.ts'
import { CredentialError } from './errors.ts'
import { defaultRandom, type RandomSource, takeRandom } from './random-values.ts'
import { storePaths } from './store-paths.ts'

/** Size of a new handle secret, and the smallest one accepted. */
export const HANDLE_SECRET_BYTES = 32
const MAX_SECRET_BYTES = 4096

/**
 * Creates `<stateDir>/handle-secret` (32 random bytes, mode 0600) unless it exists. Never
 * overwrites: the file is linked into place complete, so concurrent callers cannot both win.
 * Returns true if it created the file.
 */
export async function ensureHandleSecret(
  stateDir: string,
  random: RandomSource = defaultRandom,
): Promise<boolean> {
  const paths = storePaths(stateDir)
  const bytes = takeRandom(random, HANDLE_SECRET_BYTES)
  try {
    await ensurePrivateDir(paths.stateDir)
    return await createFileExclusive(paths.handleSecret, bytes, 0o600)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error'
    throw new CredentialError('ERR_CREDENTIALS_IO', `cannot create handle-secret (${code})`, { cause: error })
  }
}

/**
 * Reads `<stateDir>/handle-secret` for the handle codec. Refuses a missing file
 * (`ERR_CREDENTIALS_SECRET_MISSING`), one that is not a regular file or is shorter than 32 bytes
 * (`ERR_CREDENTIALS_SECRET_INVALID`), and one readable or writable by group or others
 * (`ERR_CREDENTIALS_SECRET_INSECURE`). A symlink is not followed.
 *
 * @example const secret = await readHandleSecret('state') // Uint8Array, at least 32 bytes
 */
export async function readHandleSecret(stateDir: string): Promise<Uint8Array> {
  const { handleSecret } = storePaths(stateDir)
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(handleSecret, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      throw new CredentialError(
        'ERR_CREDENTIALS_SECRET_MISSING',
        'handle-secret does not exist; run the stack set-up',
      )
    }
    if (code === 'ELOOP') {
      throw new CredentialError(
        'ERR_CREDENTIALS_SECRET_INVALID',
        'handle-secret must be a regular file, not a link',
      )
    }
    throw new CredentialError(
      'ERR_CREDENTIALS_IO',
      `cannot open handle-secret (${code ?? 'unknown error'})`,
      {
        cause: error,
      },
    )
  }
  try {
    // Checks on the opened descriptor, so the file cannot be swapped between check and read.
    const info = await handle.stat()
    if (!info.isFile()) {
      throw new CredentialError('ERR_CREDENTIALS_SECRET_INVALID', 'handle-secret must be a regular file')
    }
    if ((info.mode & 0o077) !== 0) {
      throw new CredentialError(
        'ERR_CREDENTIALS_SECRET_INSECURE',
        `handle-secret is accessible by group or others (mode ${(info.mode & 0o777).toString(8)}); chmod 600 it`,
      )
    }
    if (info.size < HANDLE_SECRET_BYTES || info.size > MAX_SECRET_BYTES) {
      throw new CredentialError(
        'ERR_CREDENTIALS_SECRET_INVALID',
        `handle-secret must hold ${HANDLE_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`,
      )
    }
    const bytes = await handle.readFile()
    if (bytes.length < HANDLE_SECRET_BYTES) {
      throw new CredentialError(
        'ERR_CREDENTIALS_SECRET_INVALID',
        `handle-secret must hold at least ${HANDLE_SECRET_BYTES} bytes`,
      )
    }
    return new Uint8Array(bytes)
  } finally {
    await handle.close()
  }
}
