import { KEY_MAX_LENGTH, KEY_MIN_LENGTH } from './schemas.ts'

/** Why a presented key is refused before it is compared with any configured key. */
export type KeyFormatCode = 'ERR_CREDENTIALS_MISSING' | 'ERR_CREDENTIALS_MALFORMED' | 'ERR_CREDENTIALS_WEAK'

/** Result of {@link checkKey}. */
export type KeyCheck = { ok: true } | { ok: false; code: KeyFormatCode; message: string }

const OUTSIDE_PRINTABLE_ASCII = /[^\x21-\x7e]/

/**
 * Classifies a presented key against the spec's key rules, in this order:
 * - `ERR_CREDENTIALS_MISSING`: `undefined` (or `null`) or the empty string;
 * - `ERR_CREDENTIALS_MALFORMED`: any character outside printable ASCII 0x21-0x7E (whitespace,
 *   control characters, anything non-ASCII);
 * - `ERR_CREDENTIALS_WEAK`: well-formed but shorter than 32 or longer than 512 characters.
 *
 * Messages are fixed per code and never contain the key or its length.
 *
 * @example checkKey('agk_…') // { ok: true }
 */
export function checkKey(key: string | undefined): KeyCheck {
  if (key === undefined || key === null || key === '') {
    return { ok: false, code: 'ERR_CREDENTIALS_MISSING', message: 'no credential was presented' }
  }
  // Non-strings can only come from untyped callers; they are refused like bad characters.
  if (typeof key !== 'string' || OUTSIDE_PRINTABLE_ASCII.test(key)) {
    return {
      ok: false,
      code: 'ERR_CREDENTIALS_MALFORMED',
      message: 'credential contains characters outside printable non-whitespace ASCII',
    }
  }
  if (key.length < KEY_MIN_LENGTH || key.length > KEY_MAX_LENGTH) {
    return {
      ok: false,
      code: 'ERR_CREDENTIALS_WEAK',
      message: `credential must be ${KEY_MIN_LENGTH} to ${KEY_MAX_LENGTH} characters long`,
    }
  }
  return { ok: true }
}
