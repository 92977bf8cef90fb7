// `read`: the safe read of one file, its bytes decoded as text (or refused) and its media type.

import { extname } from 'node:path'
import { canonicalise } from './canonicalise.ts'
import { checkPath } from './check-path.ts'
import { denied, GuardError } from './errors.ts'
import { readSafeFile } from './safe-file.ts'
import type { ReadResult } from './types.ts'

/**
 * `read`: pure rules, then canonicalisation with the rules applied again to the canonical path,
 * then the safe open (descriptor verified inside the root), bounded read and text checks.
 */
export async function readFile(root: string, path: string, maxBytes: number): Promise<ReadResult> {
  const checked = checkPath(path)
  if (!checked.ok) throw denied()
  const canonical = await canonicalise(root, checked.path.split('/'))
  const text = decodeText(await readSafeFile(root, canonical, maxBytes))
  return { path: checked.path, text, mimeType: mimeTypeOf(checked.path), truncated: false }
}

// gitleaks "private-key" rule, header only: a key body with an innocent file name (notes.txt) is
// still a key. Covers PKCS#1/#8 (RSA, EC, DSA, ENCRYPTED), OPENSSH and PGP private key blocks.
const PRIVATE_KEY_BLOCK = /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/i
// PuTTY's own format has no PEM armour.
const PUTTY_PRIVATE_KEY = /^PuTTY-User-Key-File-\d+:/m

const decoder = new TextDecoder('utf-8', { fatal: true })

/** True when the text contains a private key in a format we recognise. */
export function containsPrivateKey(text: string): boolean {
  return PRIVATE_KEY_BLOCK.test(text) || PUTTY_PRIVATE_KEY.test(text)
}

/**
 * Decodes file bytes as text or refuses them: a NUL byte or invalid UTF-8 is "not text"; text
 * holding a private key is denied like a secret file name. A leading BOM is dropped.
 */
export function decodeText(bytes: Uint8Array): string {
  if (bytes.includes(0)) throw new GuardError('ERR_GUARD_NOT_TEXT')
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    throw new GuardError('ERR_GUARD_NOT_TEXT')
  }
  if (containsPrivateKey(text)) throw denied()
  return text
}

// Text types only: `read` refuses anything that is not UTF-8 text, so a binary type is never
// needed. Unknown extensions are text/plain.
const BY_EXTENSION: Readonly<Record<string, string>> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.cjs': 'text/javascript',
  '.jsx': 'text/javascript',
  '.ts': 'text/typescript',
  '.mts': 'text/typescript',
  '.cts': 'text/typescript',
  '.tsx': 'text/typescript',
  '.json': 'application/json',
  '.jsonc': 'application/json',
  '.map': 'application/json',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.toml': 'application/toml',
  '.py': 'text/x-python',
  '.go': 'text/x-go',
  '.rs': 'text/x-rust',
  '.java': 'text/x-java',
  '.c': 'text/x-c',
  '.h': 'text/x-c',
  '.cc': 'text/x-c++',
  '.cpp': 'text/x-c++',
  '.hpp': 'text/x-c++',
  '.sh': 'application/x-sh',
  '.sql': 'application/sql',
}

/** A media type for a text file, from its name; `text/plain` when the extension is unknown. */
export function mimeTypeOf(path: string): string {
  return BY_EXTENSION[extname(path).toLowerCase()] ?? 'text/plain'
}
