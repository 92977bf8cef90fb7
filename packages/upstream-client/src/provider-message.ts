// A model provider's error message, made fit to show a remote client or an operator: the runtime
// passes on what the provider (or the network layer) said, which can quote an API key ("Incorrect
// API key provided: sk-proj-…"), a URL with credentials in it, or a path on the runtime's host.
// What stays is the sentence a person needs ("the model provider is unreachable", "rate limit
// exceeded", "model not found"); what goes is anything that looks like a secret or a host path.
//
// Shapes are a net, not a guarantee: a key with no known prefix, shorter than a token run, or
// split by punctuation can look like a word. The secrets a stack knows (its providers' keys, its
// passwords) are therefore also removed by value (`knownSecrets`), whatever their shape.

/** Longest message kept, in characters (a provider can answer with a whole HTML page). */
export const PROVIDER_MESSAGE_MAX = 300

const REDACTED = '[redacted]'

/** Invisible characters (zero-width, bidi controls, word joiners, tags): removed, never spaced. */
const INVISIBLE = /[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\u{e0000}-\u{e007f}]/gu
/** Control characters: become a space. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g

/** Token-like runs: a known key prefix, AWS access key ids, JWTs. */
const KEY_PREFIXED =
  /\b(?:sk|pk|rk|ak|api|key|sess|ghp|gho|ghs|ghu|ghr|github_pat|glpat|xox[abpr]|AIza|hf|npm)[-_][A-Za-z0-9._\-~+/=*]{6,}/g
const AWS_KEY_ID = /\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{12,}\b/g
const JWT = /\beyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*)?/g
// Without `/` and `.`: a URL's path or a host name is never one run (a key with them is cut into
// runs that are each still long).
const LONG_TOKEN = /[A-Za-z0-9_\-+=~]{24,}/g
/** `Bearer …`, `Basic …` (also `Bearer:…`), and `Token …` only before something token-like. */
const SCHEME_CREDENTIAL = /\b(Bearer|Basic)(\s*[:=]?\s*)[^\s"',;]+/gi
const TOKEN_WORD = /\b(Token)(\s+)(?=[^\s"',;]*\d)[^\s"',;]{8,}/gi
/** `key=…` / `key: …` pairs (query strings, headers or JSON quoted in messages). */
const SECRET_PAIR =
  /\b((?:api[-_]?key|apikey|access[-_]?key|access[-_]?token|refresh[-_]?token|id[-_]?token|session[-_]?token|secret[-_]?key|client[-_]?secret|private[-_]?key|token|secret|password|passwd|pwd|key|auth|authorization|x-api-key|credentials?|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)["']?\s*[:=]\s*["']?)[^\s"',;&]+/gi
/** `scheme://user:password@host` (the password may hold `@`) → `scheme://host`; also `//…@`. */
const URL_USERINFO = /((?:\b[a-z][a-z0-9+.-]*:)?\/\/)[^\s/?#]*@/gi
/** Absolute paths on the host (POSIX with two segments or more, Windows drive or UNC paths, `~/…`). */
const POSIX_PATH = /(^|[\s"'(=[`,])(?:~|\/(?:[\w.@+-]+))(?:\/[\w.@+-]+)+\/?/g
const WINDOWS_PATH = /\b[A-Za-z]:\\(?:[^\\\s"']+\\)*[^\\\s"']*/g
const UNC_PATH = /\\\\[^\\\s"']+(?:\\[^\\\s"']+)+/g

/** True when a long run is token-like rather than a long word: it has a digit in it. */
const looksLikeToken = (run: string): boolean => /\d/.test(run)

/** Exact secrets shorter than this are not matched by value (they would hit ordinary words). */
const KNOWN_SECRET_MIN = 6

/**
 * `text` with secrets removed: the `knownSecrets` by value (longest first), then anything shaped
 * like a key, a token, a credential pair or credentials in a URL. Invisible characters are
 * dropped first (a key split by zero-width spaces is still one key), and the text is NFKC
 * normalised (full-width look-alikes become what they look like). Nothing else is changed: no
 * cap, paths and white space kept (for operators' logs; clients get {@link sanitizeProviderMessage}).
 */
export function redactSecrets(text: string, knownSecrets: readonly string[] = []): string {
  let out = text.replace(INVISIBLE, '').normalize('NFKC')
  const known = knownSecrets
    .filter((s) => typeof s === 'string' && s.length >= KNOWN_SECRET_MIN)
    .sort((a, b) => b.length - a.length)
  for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(REDACTED)
  return out
    .replace(URL_USERINFO, '$1')
    .replace(JWT, REDACTED)
    .replace(SCHEME_CREDENTIAL, `$1$2${REDACTED}`)
    .replace(TOKEN_WORD, `$1$2${REDACTED}`)
    .replace(SECRET_PAIR, `$1${REDACTED}`)
    .replace(KEY_PREFIXED, REDACTED)
    .replace(AWS_KEY_ID, REDACTED)
    .replace(LONG_TOKEN, (run) => (looksLikeToken(run) ? REDACTED : run))
}

/**
 * The provider's message with keys, credentials and host paths removed ({@link redactSecrets},
 * with the `knownSecrets` by value), control characters dropped, white space collapsed and the
 * length capped ({@link PROVIDER_MESSAGE_MAX}). Returns `undefined` for a message that is not a
 * string or is empty once cleaned.
 */
export function sanitizeProviderMessage(
  message: unknown,
  knownSecrets: readonly string[] = [],
): string | undefined {
  if (typeof message !== 'string') return undefined
  let text = redactSecrets(message.replace(CONTROL, ' '), knownSecrets)
    .replace(WINDOWS_PATH, '[path]')
    .replace(UNC_PATH, '[path]')
    // A path inside a URL (`https://host/v1/chat`) has no lead character before it: kept.
    .replace(POSIX_PATH, '$1[path]')
    .replace(/\s+/g, ' ')
    .trim()
  if (text.length > PROVIDER_MESSAGE_MAX) text = `${text.slice(0, PROVIDER_MESSAGE_MAX - 3).trimEnd()}...`
  return text === '' ? undefined : text
}
