import { realpathSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'

// Everything the gateway relays from the runtime (message text, tool titles, permission
// patterns, questions, errors, diffs, todos, session titles) passes through ONE redactor, made
// once per gateway, before it reaches a client. The runtime works on the host and quotes host
// paths and its own ids freely; a client must see neither.
//
// The rules, applied in this order to every relayed string:
//
// 1. Every OpenCode id → `[id]`: a known prefix (`ses msg prt per que tool usr pty wrk job evt`),
//    `_`, 12 hex digits (the time-ordered counter) and 14 base62 characters, with no boundary
//    required on either side, so an id glued to other text (`x_ses_…`, `ses_…abc`, inside a URL
//    or a path) goes too. The 26-character body never occurs in ordinary words.
// 2. URLs are kept as they are by rules 3 and 4: a scheme (a letter, then letters, digits, `+`,
//    `.`, `-`) that does not continue a word or a path, `://`, then everything up to whitespace,
//    a quote, a backtick or an angle bracket (`https://x/y` stays). `file:` URLs are not kept:
//    their path goes through rules 3 and 4 (`file:///<root>/a` → `file:a`).
// 3. The workspace root, as configured and as its realpath, where a path may start (see 4) and
//    ending at a component boundary: followed by `/`, the end, a character that cannot be in a
//    component (see 4), or sentence punctuation (`.` `!` `?`) that ends the path. The root, the
//    run of `/` before it and the run after it go: `<root>/src/a.ts` → `src/a.ts`, `<root>/*` →
//    `*`, `-I<root>/include` → `-Iinclude`, and the root alone (`<root>`, `<root>/`) → `.`.
//    `<root>-old/x`, `<root>2` and `<root>.bak` are not the root (rule 4 applies to them). What
//    follows the root is not re-read: `<root>/a//<root>/b` → `a//<root>/b`, a relative path
//    (`//` is `/`) that merely spells the root's characters, as a relative `x/<root>/y` does.
//    A root is never matched inside a word: with the root `/work`, `src/work/a.ts` stays.
//    A root of two or more components also counts without its leading `/` (the runtime reports
//    paths relative to `/` outside a git repository: `srv/stack/workspace/a.ts` → `a.ts`).
// 4. Any other absolute path of at least two components → `[outside workspace]`, sentence
//    punctuation that ends it kept (`see /etc/hosts.` → `see [outside workspace].`). A path is a
//    run of `/` and then components separated by runs of `/` (POSIX: `//` is `/`); it starts at
//    the start of the text, after a character that cannot continue a word or a relative path
//    (anything but a letter, digit, `_`, `.`, `~` or `/`), or after a one-letter option at the
//    start of a word (`-I/usr/include/x`). So `and/or`, `a/b/c`, `./src/x`, `../x/y`, `~/x/y`
//    and `$HOME/x` stay. A component is a run of anything but whitespace, `/`, `\`, quotes,
//    backticks, brackets of any kind, `|`, `;`, `,`, `:`, `=` and `&` (so `<root>/a.ts:12:5`
//    keeps its position and `PATH=/a/b:/c/d` is two paths). A single component (`/tmp`, `/work`
//    when it is not the root) stays: it says nothing about the host's layout. Accepted
//    over-redaction: absolute-looking routes in prose (`GET /api/users`) and regex literals
//    (`/a/g`) become the placeholder too.
//
// Every pattern runs in linear time: an alternative starts only where its lookbehind allows (the
// first character of a run), and fails at once or consumes what it scanned, so a hostile model
// cannot stall the gateway with crafted text.

/** What replaces an absolute path that is not inside the workspace. */
export const OUTSIDE_WORKSPACE = '[outside workspace]'
/** What replaces an upstream (OpenCode) id. */
export const REDACTED_ID = '[id]'

/** The id prefixes of OpenCode 1.18.33 (`id/id.ts`), the gateway-facing ones first. */
const ID_PREFIXES = ['ses', 'msg', 'prt', 'per', 'que', 'tool', 'usr', 'pty', 'wrk', 'job', 'evt']
const ID = new RegExp(`(?:${ID_PREFIXES.join('|')})_[0-9a-fA-F]{12}[0-9A-Za-z]{14}`, 'g')

/**
 * Rule 1 alone: every OpenCode id → `[id]`. For text that is not relayed to a client but must
 * not carry upstream ids either (the runtime's own log lines that `sallyport up` passes on).
 */
export function redactIds(value: string): string {
  return value.replace(ID, REDACTED_ID)
}

/** One path component character (rule 4). */
const C = String.raw`[^\s/\\"'\x60<>()[\]{}|;,:=&]`
const COMPONENT_CHAR = new RegExp(C, 'u')
/**
 * Where a path may start (rules 3, 4): not after a character that continues a word or a relative
 * path, nor after `/` (only a run's first `/` starts one, which also keeps the scan linear); or
 * right after a one-letter option at the start of a word (`-I/usr/include`).
 */
const PATH_START = String.raw`(?:(?<![\p{L}\p{N}_.~/])|(?<=(?:^|\s)-[A-Za-z])|(?<=\\[nrt]))`
const URL = String.raw`(?<![\p{L}\p{N}+.\-/])(?![Ff][Ii][Ll][Ee]:)[A-Za-z][A-Za-z0-9+.\-]*:\/\/[^\s"'\x60<>]*`
const PATH = String.raw`\/+${C}+(?:\/+${C}+)*\/*`
/** The root ends at a component boundary: only sentence punctuation, then a non-component character or the end. */
const ROOT_END = `(?=[.!?]*(?!${C}))`
const OUTSIDE = new RegExp(`(${URL})|${PATH_START}${PATH}`, 'gu')

/** Options of {@link createRedactor}. */
export interface RedactorOptions {
  /**
   * The workspace root as configured: an absolute path. Paths under it (and under its realpath)
   * become relative. Without it, every absolute path of two or more components is outside.
   */
  workspaceRoot?: string
  /** Canonicalises the root once, at creation. Default `fs.realpathSync.native`; a failure keeps only the configured form. */
  realpath?: (path: string) => string
  /**
   * Secrets the stack knows (its providers' API keys, its passwords), asked on each rewrite:
   * every occurrence becomes `[redacted]` in all relayed text, whatever its shape — a provider's
   * error or a model may quote a key. Values shorter than 6 characters are ignored.
   */
  knownSecrets?: () => readonly string[]
}

/** `value` with every occurrence of each secret (6 characters or more, longest first) → `[redacted]`. */
function withoutKnown(value: string, secrets: readonly string[]): string {
  let out = value
  for (const secret of secrets) {
    if (secret.length < 6 || !out.includes(secret)) continue
    out = out.split(secret).join('[redacted]')
  }
  return out
}

/** Rewrites relayed runtime text so it carries no host path and no upstream id. */
export interface Redactor {
  /** The rewritten text (see the rules at the top of `redact.ts`). Idempotent. */
  text(value: string): string
  /**
   * Rewrites, then cuts to at most `max` characters (the last one `…` when cut). Cutting after
   * rewriting means a cut never leaves part of a path or id behind.
   */
  excerpt(value: string, max: number): string
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/** Length of the run of sentence punctuation that ends `text` (a scan: `/[.!?]+$/` is quadratic). */
function trailingPunctuation(text: string): number {
  let i = text.length
  while (i > 0 && (text[i - 1] === '.' || text[i - 1] === '!' || text[i - 1] === '?')) i--
  return text.length - i
}

/** Rule 4 for one matched path: the placeholder, unless it has a single component. */
function outside(match: string, url: string | undefined): string {
  if (url !== undefined) return match
  const cut = match.length - trailingPunctuation(match)
  const components = match.slice(0, cut).split('/').filter(Boolean).length
  if (components < 2) return match
  return `${OUTSIDE_WORKSPACE}${match.slice(cut)}`
}

/** Rule 3: the regex of the root's forms, or `undefined` when no root relativises anything. */
function rootPattern(roots: ReadonlySet<string>): RegExp | undefined {
  // `/` relativises nothing: with it every absolute path counts as outside, which leaks nothing.
  // Without their leading `/`: the pattern takes the whole run of `/` before them (`//<root>`).
  const literal = [...roots]
    .filter((r) => r !== '/')
    .sort((a, b) => b.length - a.length)
    .map((r) => escapeRegExp(r.slice(1)))
  if (literal.length === 0) return undefined
  // The runtime also reports paths relative to `/` (its worktree outside a git repository):
  // `srv/stack/workspace/a.ts`. Such a form counts only for a root of two or more components,
  // so a one-component root (`/work`) never eats the ordinary word `work`.
  const bare = literal.filter((r) => r.includes('/'))
  const forms = [`\\/+(?:${literal.join('|')})`, ...(bare.length > 0 ? [`(?:${bare.join('|')})`] : [])]
  // Groups: 1 = a URL (kept), 2 = the run of `/` after the root.
  return new RegExp(`(${URL})|${PATH_START}(?:${forms.join('|')})${ROOT_END}(\\/*)`, 'gu')
}

/**
 * Creates the gateway's redactor. The root is normalised and canonicalised here, once.
 * @throws TypeError when `workspaceRoot` is given but is not an absolute path.
 * @example createRedactor({ workspaceRoot: '/work' }).text('see /work/src/a.ts') // 'see src/a.ts'
 */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  const roots = new Set<string>()
  if (options.workspaceRoot !== undefined) {
    const root = options.workspaceRoot
    // The message never repeats the rejected value (house rule: no absolute path in a message).
    if (typeof root !== 'string' || !isAbsolute(root) || root.includes('\0'))
      throw new TypeError('workspaceRoot must be an absolute path')
    const configured = resolve(root)
    roots.add(configured)
    try {
      roots.add((options.realpath ?? realpathSync.native)(configured))
    } catch {
      // A root that does not exist yet has no other form; the configured one still applies.
    }
  }
  const root = rootPattern(roots)

  // The root and its slashes vanish before a component (`<root>/src` → `src`); alone it is `.`.
  const relative = (
    match: string,
    url: string | undefined,
    after: string,
    offset: number,
    whole: string,
  ): string => {
    if (url !== undefined) return match
    const next = whole[offset + match.length]
    return after !== '' && next !== undefined && COMPONENT_CHAR.test(next) ? '' : '.'
  }

  // Ids first: `[id]` then separates like any bracket, so `ses_…/<root>` reads the same the
  // second time (the rewrite is idempotent).
  const knownSecrets = options.knownSecrets
  const text = (value: string): string => {
    const noIds = (knownSecrets ? withoutKnown(value, knownSecrets()) : value).replace(ID, REDACTED_ID)
    const inside = root ? noIds.replace(root, relative) : noIds
    return inside.replace(OUTSIDE, outside)
  }

  return {
    text,
    excerpt(value, max) {
      const clean = text(value)
      return clean.length <= max ? clean : `${clean.slice(0, Math.max(0, max - 1))}…`
    },
  }
}
