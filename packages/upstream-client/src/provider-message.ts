// A model provider's error message, made fit to show a remote client or an operator: the runtime
// passes on what the provider (or the network layer) said, which can quote an API key ("Incorrect
// API key provided: sk-proj-…"), a URL with credentials in it, or a path on the runtime's host.
// What stays is the sentence a person needs ("the model provider is unreachable", "rate limit
// exceeded", "model not found"); what goes is anything that looks like a secret or a host path.

/** Longest message kept, in characters (a provider can answer with a whole HTML page). */
export const PROVIDER_MESSAGE_MAX = 300

const REDACTED = '[redacted]'

/** Token-like runs: a known key prefix, or 24+ characters of key alphabet with a digit in them. */
const KEY_PREFIXED =
  /\b(?:sk|pk|rk|ak|api|key|sess|ghp|gho|ghs|xox[abp]|AIza|hf)[-_][A-Za-z0-9._\-~+/=*]{6,}/g
// Without `/` and `.`: a URL's path or a host name is never one run (a key with them is cut into
// runs that are each still long).
const LONG_TOKEN = /[A-Za-z0-9_\-+=~]{24,}/g
/** `Bearer …`, `Basic …`, and `key=…`-style pairs (query strings, headers quoted in messages). */
const SCHEME_CREDENTIAL = /\b(Bearer|Basic|Token)\s+[^\s"',;]+/gi
const SECRET_PAIR =
  /\b((?:api[-_]?key|access[-_]?token|token|secret|password|passwd|pwd|key|auth|authorization|x-api-key)["']?\s*[:=]\s*["']?)[^\s"',;&]+/gi
/** `scheme://user:password@host` → `scheme://host`. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi
/** Absolute paths on the host (POSIX with two segments or more, Windows drive paths, `~/…`). */
const POSIX_PATH = /(^|[\s"'(=])(?:~|\/(?:[\w.@+-]+))(?:\/[\w.@+-]+)+\/?/g
const WINDOWS_PATH = /\b[A-Za-z]:\\(?:[^\\\s"']+\\)*[^\\\s"']*/g

/** True when a long run is token-like rather than a long word: it has a digit in it. */
const looksLikeToken = (run: string): boolean => /\d/.test(run)

/**
 * The provider's message with keys, credentials and host paths removed, control characters
 * dropped, white space collapsed and the length capped ({@link PROVIDER_MESSAGE_MAX}). Returns
 * `undefined` for a message that is not a string or is empty once cleaned.
 */
export function sanitizeProviderMessage(message: unknown): string | undefined {
  if (typeof message !== 'string') return undefined
  let text = message
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]+/g, ' ')
    .replace(URL_USERINFO, '$1')
    .replace(SCHEME_CREDENTIAL, `$1 ${REDACTED}`)
    .replace(SECRET_PAIR, `$1${REDACTED}`)
    .replace(KEY_PREFIXED, REDACTED)
    .replace(WINDOWS_PATH, '[path]')
    // A path inside a URL (`https://host/v1/chat`) has no lead character before it: kept.
    .replace(POSIX_PATH, '$1[path]')
    .replace(LONG_TOKEN, (run) => (looksLikeToken(run) ? REDACTED : run))
    .replace(/\s+/g, ' ')
    .trim()
  if (text.length > PROVIDER_MESSAGE_MAX) text = `${text.slice(0, PROVIDER_MESSAGE_MAX - 3).trimEnd()}...`
  return text === '' ? undefined : text
}
