import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { PREFERENCES_FILES } from '../stack/managed-files.ts'

// The secrets a stack knows, for the gateway to remove by value from everything it relays (and
// the CLI from the runtime's log lines it passes on): a provider's error or a model may quote an
// API key in any shape, and shape rules alone miss a key with no known prefix. Read from the
// files that hold them — the runtime's credential store (`knowledge/secrets/auth.json`: every
// string of every entry: API keys, OAuth tokens) and the preferences file (every provider's
// `options.apiKey` and `options.headers` values) — again only when one of them changed (checked
// at most once a second), so a key saved later (`sallyport preset save --key-stdin`) is known
// within a second. Plus fixed values given at start (the runtime passwords).

/** Values shorter than this are not secrets worth matching (they would hit ordinary words). */
const MIN_LENGTH = 8
const RECHECK_MS = 1_000

/** Every string value in `value`, at any depth. */
function strings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value)
  else if (Array.isArray(value)) for (const item of value) strings(item, out)
  else if (value && typeof value === 'object') for (const item of Object.values(value)) strings(item, out)
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    return undefined
  }
}

/** The provider secrets of a preferences file: `provider.<id>.options.apiKey` and header values. */
function preferenceSecrets(prefs: unknown, out: string[]): void {
  const providers = (prefs as { provider?: unknown } | undefined)?.provider
  if (!providers || typeof providers !== 'object') return
  for (const provider of Object.values(providers as Record<string, unknown>)) {
    const options = (provider as { options?: { apiKey?: unknown; headers?: unknown } } | undefined)?.options
    if (!options) continue
    strings(options.apiKey, out)
    strings(options.headers, out)
  }
}

/**
 * A cheap `() => secrets` for the gateway's redactor: the files are stat'ed at most once a second
 * and read again only when their size or mtime changed. Never throws: unreadable files count as
 * empty (what they held before is dropped only when they change).
 */
export function knownSecretsOf(input: {
  readonly authFile: string
  readonly userConfigDir: string
  readonly fixed?: readonly string[]
  readonly now?: () => number
}): () => readonly string[] {
  const now = input.now ?? Date.now
  const files = [input.authFile, ...PREFERENCES_FILES.map((name) => join(input.userConfigDir, name))]
  const fixed = (input.fixed ?? []).filter((s) => s.length >= MIN_LENGTH)
  let signature = ''
  let checkedAt = Number.NEGATIVE_INFINITY
  let secrets: readonly string[] = fixed
  return () => {
    if (now() - checkedAt < RECHECK_MS) return secrets
    checkedAt = now()
    const next = files
      .map((file) => {
        try {
          const info = statSync(file)
          return `${info.size}:${info.mtimeMs}`
        } catch {
          return '-'
        }
      })
      .join('|')
    if (next === signature) return secrets
    signature = next
    const found: string[] = []
    strings(readJson(input.authFile), found)
    for (const file of files.slice(1)) preferenceSecrets(readJson(file), found)
    // Longest first: a key that contains another is removed whole.
    secrets = [
      ...new Set([
        ...fixed,
        ...found.filter((s) => s.length >= MIN_LENGTH && !/^(api|oauth|wellknown)$/.test(s)),
      ]),
    ].sort((a, b) => b.length - a.length)
    return secrets
  }
}
