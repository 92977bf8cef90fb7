import { type BinaryMissingReason, findOpencodeBinary, RuntimeProcessError } from '@sallyport/runtime-process'
import { CliError } from '../errors.ts'

/** What the operator reads when no runtime binary is found, and what to do about it. */
const BINARY_MISSING: Record<BinaryMissingReason, string> = {
  'override-missing': 'SALLYPORT_OPENCODE_BIN does not exist',
  'package-missing': 'the opencode-ai package is not installed next to sallyport',
  'platform-missing': `no opencode binary for ${process.platform}-${process.arch}: reinstall sallyport so opencode-ai's platform package is present`,
}

/**
 * The pinned `opencode` binary (`SALLYPORT_OPENCODE_BIN` overrides it), or the one line that says
 * why there is none.
 */
export function findBinary(
  env: NodeJS.ProcessEnv,
): { ok: true; path: string } | { ok: false; message: string } {
  const found = findOpencodeBinary({ env, overrideVariable: 'SALLYPORT_OPENCODE_BIN' })
  return found.ok ? found : { ok: false, message: BINARY_MISSING[found.reason] }
}

/** {@link findBinary}, throwing `ERR_CLI_BINARY_NOT_FOUND` (exit 8). */
export function resolveBinary(env: NodeJS.ProcessEnv): string {
  const found = findBinary(env)
  if (found.ok) return found.path
  throw new CliError('ERR_CLI_BINARY_NOT_FOUND', found.message)
}

/**
 * A runtime that exited or timed out while starting becomes `ERR_CLI_START_FAILED` (exit 8) with
 * the same one-line message; anything else is passed on unchanged.
 */
export function asStartFailure(error: unknown): unknown {
  if (!RuntimeProcessError.isInstance(error)) return error
  return new CliError('ERR_CLI_START_FAILED', error.message, { cause: error })
}
