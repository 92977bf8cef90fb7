import { denied, GuardError } from './errors.ts'

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
