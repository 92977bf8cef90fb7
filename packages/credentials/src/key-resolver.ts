import { type FSWatcher, watch } from 'node:fs'
import { CredentialError } from './errors.ts'
import { buildKeyIndex, type KeyIndex, type Principal, type ResolveResult } from './key-matcher.ts'
import { projectionTarget, readGeneration, readSnapshot } from './read-store.ts'
import { type StorePaths, storePaths } from './store-paths.ts'

/** Options of {@link createKeyResolver}. */
export interface KeyResolverOptions {
  /** The stack's `state/` directory, as given to the store. */
  readonly stateDir: string
  /** How often at most the generation file is checked (default 250 ms, at most 1 500 ms). */
  readonly reloadIntervalMs?: number
  /** Use `fs.watch` on `credentials/` as a hint to check sooner (default true). */
  readonly watch?: boolean
  /**
   * Called when a reload fails and the previous snapshot stays in force, and when a reload had to
   * leave out a damaged credential directory or OAuth mapping file (once per distinct problem
   * until a reload no longer has it). Default: `process.emitWarning`.
   */
  readonly onReloadError?: (error: CredentialError) => void
}

/** Resolves bearer keys and OAuth subjects to principals for the gateway. */
export interface KeyResolver {
  /**
   * Resolves a presented key. Never throws for a bad key; throws `ERR_CREDENTIALS_CORRUPT` or
   * `ERR_CREDENTIALS_IO` only when the store could never be read (no good snapshot to use).
   */
  resolve(presentedKey: string | undefined): Promise<ResolveResult>
  /** The principal mapped to the exact (issuer, subject) pair, or `undefined`. Throws like `resolve`. */
  resolveOAuth(issuer: string, subject: string): Promise<Principal | undefined>
  /** Stops the file watcher. Later calls still work, checking by interval only. */
  close(): void
}

interface Snapshot {
  readonly index: KeyIndex
  readonly oauth: ReadonlyMap<string, Principal>
}

const MAX_INTERVAL_MS = 1_500

function pairKey(issuer: string, subject: string): string {
  return `${issuer}\u0000${subject}`
}

function asCredentialError(error: unknown): CredentialError {
  if (CredentialError.isInstance(error)) return error
  return new CredentialError('ERR_CREDENTIALS_IO', 'credential store could not be read', { cause: error })
}

/** The Secret's current data directory, or `undefined` (an ordinary store, or unreadable). */
async function projectionOf(paths: StorePaths): Promise<string | undefined> {
  return projectionTarget(paths).catch(() => undefined)
}

/**
 * Reads the store once. In a Kubernetes Secret volume the kubelet may swap `..data` between two
 * reads of one snapshot: a credential's `meta.json` could come from the old Secret and its `key`
 * from the new one (a rotated key acting with the policy it had before), and the old files are
 * deleted right after the swap. Such a read is recognised by `..data` having moved meanwhile and
 * is done again, at most three times (Secret updates are seconds apart at the very least; after
 * the third the last read stands, and the next check reads again since its signature is stale).
 * An ordinary store has no `..data` and is read once, as before.
 */
async function readConsistentSnapshot(paths: StorePaths): Promise<Awaited<ReturnType<typeof readSnapshot>>> {
  for (let attempt = 1; ; attempt++) {
    const before = await projectionOf(paths)
    const read = await readSnapshot(paths)
    if (before === undefined || attempt >= 3 || (await projectionOf(paths)) === before) return read
  }
}

async function loadSnapshot(paths: StorePaths): Promise<{ snapshot: Snapshot; problems: CredentialError[] }> {
  const { credentials, mappings, problems } = await readConsistentSnapshot(paths)
  const keyed = credentials.map(({ username, meta, key }) => ({
    username,
    identity: meta.identity,
    policy: meta.policy,
    key,
  }))
  const index = buildKeyIndex(keyed)
  const byUsername = new Map<string, Principal>(
    keyed.map(({ username, identity, policy }) => [username, Object.freeze({ username, identity, policy })]),
  )
  const oauth = new Map<string, Principal>()
  for (const mapping of mappings) {
    // A mapping to a username that does not exist (yet) grants nothing.
    const principal = byUsername.get(mapping.username)
    if (principal !== undefined) oauth.set(pairKey(mapping.issuer, mapping.subject), principal)
  }
  return { snapshot: { index, oauth }, problems }
}

/**
 * Creates the gateway's key resolver over the store in `stateDir`. The store is read on first
 * use and then re-read whenever the generation file (bumped by every mutation, from any
 * process) changes, or, for a store mounted from a Kubernetes Secret volume, whenever the
 * volume's `..data` link moves (every update of the Secret); it is checked at most every
 * `reloadIntervalMs` on use, sooner when `fs.watch` reports activity, so changes are seen within
 * 2 seconds without a restart.
 * A damaged credential directory is left out (that credential is refused) and a damaged
 * `oauth-map.json` counts as no mappings, so the rest of the store, removals and rotations
 * included, still takes effect; each is reported. A reload that cannot read the store at all
 * keeps the previous snapshot and reports the error. The first read must be complete: until
 * then `resolve` throws.
 * Throws `TypeError`/`RangeError` for bad options.
 */
export function createKeyResolver(options: KeyResolverOptions): KeyResolver {
  const paths = storePaths(options.stateDir)
  const intervalMs = options.reloadIntervalMs ?? 250
  if (!Number.isFinite(intervalMs) || intervalMs < 1 || intervalMs > MAX_INTERVAL_MS) {
    throw new RangeError(`reloadIntervalMs must be between 1 and ${MAX_INTERVAL_MS}`)
  }
  const report =
    options.onReloadError ??
    ((error: CredentialError) =>
      process.emitWarning(error.message, { type: 'CredentialWarning', code: error.code }))
  if (typeof report !== 'function') throw new TypeError('onReloadError must be a function')
  const useWatch = options.watch ?? true

  let snapshot: Snapshot | undefined
  let loadedSignature: string | undefined
  let lastCheck = 0
  let lastError: CredentialError | undefined
  // Messages of the problems already reported, until a check no longer has them.
  let reported = new Set<string>()
  let dirty = false
  let closed = false
  let watcher: FSWatcher | undefined
  let inflight: Promise<void> | undefined

  function ensureWatcher(): void {
    if (!useWatch || closed || watcher !== undefined) return
    try {
      watcher = watch(paths.root, { persistent: false }, () => {
        dirty = true
      })
      watcher.on('error', () => {
        watcher?.close()
        watcher = undefined
        dirty = true
      })
    } catch {
      watcher = undefined // no credentials/ yet: retried on the next check
    }
  }

  function reportNew(problems: readonly CredentialError[]): void {
    for (const problem of problems) if (!reported.has(problem.message)) report(problem)
    reported = new Set(problems.map((problem) => problem.message))
  }

  async function check(): Promise<void> {
    lastCheck = Date.now()
    dirty = false
    ensureWatcher()
    const problems: CredentialError[] = []
    let signature: string | undefined
    try {
      const generation = await readGeneration(paths)
      signature = generation === undefined ? 'none' : `${generation.generation}:${generation.token}`
      // A store mounted from a Kubernetes Secret changes without a `.generation` bump (the volume
      // is read-only and the kubelet knows nothing of it): every update of the Secret points
      // `..data` at a new directory, which is part of the signature. Ordinary stores have none.
      const projection = await projectionOf(paths)
      if (projection !== undefined) signature = `${signature}|${projection}`
    } catch (error) {
      problems.push(asCredentialError(error))
      signature = undefined // unknown: read the store itself
    }
    if (snapshot !== undefined && signature !== undefined && signature === loadedSignature) return
    let loaded: Awaited<ReturnType<typeof loadSnapshot>>
    try {
      loaded = await loadSnapshot(paths)
    } catch (error) {
      // The store could not be read at all: the previous snapshot stays in force.
      lastError = asCredentialError(error)
      reportNew([...problems, lastError])
      return
    }
    problems.push(...loaded.problems)
    const [firstProblem] = loaded.problems
    if (snapshot === undefined && firstProblem !== undefined) {
      // Never read completely: fail closed rather than start with parts of the store missing.
      lastError = firstProblem
      reportNew(problems)
      return
    }
    snapshot = loaded.snapshot
    // Something left out: keep re-reading the store itself, so a repair (which need not bump the
    // generation) is picked up.
    loadedSignature = firstProblem === undefined ? signature : undefined
    lastError = undefined
    reportNew(problems)
  }

  async function current(): Promise<Snapshot> {
    const due = dirty || Date.now() - lastCheck >= intervalMs
    if (due) {
      inflight ??= check().finally(() => {
        inflight = undefined
      })
      await inflight
    } else if (inflight) {
      // A concurrent caller started a read (the first, or a reload after a change): wait for it,
      // so a key rotated or added just before is not refused by the snapshot it replaces.
      await inflight
    }
    if (snapshot === undefined) {
      // Never read successfully: fail closed with the reason instead of treating every key as unknown.
      throw lastError ?? new CredentialError('ERR_CREDENTIALS_IO', 'credential store could not be read')
    }
    return snapshot
  }

  return {
    async resolve(presentedKey) {
      return (await current()).index.match(presentedKey)
    },
    async resolveOAuth(issuer, subject) {
      const { oauth } = await current()
      if (typeof issuer !== 'string' || typeof subject !== 'string') return undefined
      return oauth.get(pairKey(issuer, subject))
    },
    close() {
      closed = true
      watcher?.close()
      watcher = undefined
    },
  }
}
