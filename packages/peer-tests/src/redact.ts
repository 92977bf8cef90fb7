/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`. Peer tools are handed
 * bearer keys on their command line; whatever they print passes through here before a test can
 * show it. Secrets shorter than 8 characters are refused (`RangeError`): redacting them would
 * mangle ordinary output and hide nothing worth hiding.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) {
    if (secret.length < 8) throw new RangeError('redact: a secret must be at least 8 characters')
    out = out.split(secret).join('[redacted]')
  }
  return out
}
