import { MAX_ERROR_BODY_LENGTH } from './errors.ts'

/** Replaces every trace of the Basic credential in a text with `[REDACTED]`. */
export type Redactor = (text: string) => string

const REDACTED = '[REDACTED]'

// Any `Basic <token>` (header echoes, proxies' error pages), whoever's credential it is.
const BASIC_TOKEN = /\bBasic\s+[A-Za-z0-9+/=._~-]+/gi

/**
 * Builds the redactor for one credential. It removes the base64 token, the `user:password` pair,
 * the password itself (raw and URL-encoded) and any `Basic …` token. Longest secrets go first so
 * a shorter one never leaves half of a longer one behind.
 */
export function createRedactor(username: string, password: string, token: string): Redactor {
  const secrets = [...new Set([token, `${username}:${password}`, password, encodeURIComponent(password)])]
    .filter((secret) => secret.length > 0)
    .sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text.replace(BASIC_TOKEN, `Basic ${REDACTED}`)
    for (const secret of secrets) out = out.split(secret).join(REDACTED)
    return out
  }
}

/** Redacts, then cuts a body excerpt to {@link MAX_ERROR_BODY_LENGTH} characters. */
export function excerpt(body: unknown, redact: Redactor): string | undefined {
  if (body === undefined || body === null || body === '') return undefined
  let text: string
  if (typeof body === 'string') text = body
  else {
    try {
      text = JSON.stringify(body) ?? String(body)
    } catch {
      text = String(body)
    }
  }
  // Redact before cutting, so a cut can never split a secret into an unrecognisable prefix.
  const clean = redact(text)
  return clean.length > MAX_ERROR_BODY_LENGTH ? `${clean.slice(0, MAX_ERROR_BODY_LENGTH)}…` : clean
}

/**
 * A plain, redacted copy of a thrown value for `cause`: name, message and `code` (flattening
 * undici's nested `cause`), never the original object, which may hold a Request with headers.
 */
export function sanitizeCause(error: unknown, redact: Redactor): Error {
  const source = error instanceof Error ? error : new Error(String(error))
  const inner = source.cause instanceof Error ? source.cause : undefined
  const message = inner ? `${source.message}: ${inner.message}` : source.message
  const copy = new Error(redact(message))
  copy.name = source.name
  const code = readCode(source) ?? (inner ? readCode(inner) : undefined)
  if (code !== undefined) Object.assign(copy, { code })
  return copy
}

function readCode(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}
