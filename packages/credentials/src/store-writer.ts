import { readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { ensurePrivateDir, TEMP_PREFIX, writeFileAtomic } from './atomic-write.ts'
import { CredentialError } from './errors.ts'
import { randomToken } from './random-values.ts'
import { readGeneration } from './read-store.ts'
import type { GenerationFile } from './schemas.ts'
import { withStoreLock } from './store-lock.ts'
import { relativeToState, type StorePaths } from './store-paths.ts'

/** Lock timing of a store. */
export interface WriterOptions {
  readonly lockTimeoutMs: number
  readonly staleLockMs: number
}

/** Handed to a mutation: call `changed()` before the first write that readers could see. */
export interface Mutation {
  changed(): void
}

const LOCK_TEMP_PREFIX = `${TEMP_PREFIX}.lock`

/**
 * Removes temporary entries a crashed writer left behind. Runs under the lock, so no other
 * writer's temporaries exist, except the lock's own that waiting processes are creating.
 */
async function sweepTemporaries(dir: string, staleLockMs: number): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[])
  for (const name of names) {
    if (!name.startsWith(TEMP_PREFIX)) continue
    const path = join(dir, name)
    if (name.startsWith(LOCK_TEMP_PREFIX)) {
      const info = await stat(path).catch(() => undefined)
      if (!info || Date.now() - info.mtimeMs < staleLockMs) continue
    }
    await rm(path, { recursive: true, force: true }).catch(() => {})
  }
}

async function bumpGeneration(paths: StorePaths): Promise<void> {
  let current: GenerationFile | undefined
  try {
    current = await readGeneration(paths)
  } catch {
    current = undefined // a damaged generation file is only a change signal: start it over
  }
  const next: GenerationFile = { generation: (current?.generation ?? 0) + 1, token: randomToken() }
  await writeFileAtomic(paths.generation, `${JSON.stringify(next)}\n`)
}

/**
 * Publishes a change: bumps the generation, retrying once. If both attempts fail the change is on
 * disk but resolvers in other processes do not know to reload, which the caller must hear about.
 */
async function publish(paths: StorePaths): Promise<void> {
  try {
    await bumpGeneration(paths)
  } catch {
    try {
      await bumpGeneration(paths)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error'
      throw new CredentialError(
        'ERR_CREDENTIALS_IO',
        `the change was applied but not published: ${relativeToState(paths, paths.generation)} ` +
          `could not be updated (${code}); running gateways may not see it until the next change`,
        { cause: error },
      )
    }
  }
}

function asStoreError(paths: StorePaths, error: unknown): unknown {
  if (CredentialError.isInstance(error) || error instanceof TypeError || error instanceof RangeError) {
    return error
  }
  const errno = error as NodeJS.ErrnoException
  const where = errno.path ? ` ${relativeToState(paths, errno.path)}` : ''
  return new CredentialError(
    'ERR_CREDENTIALS_IO',
    `credential store write failed${where} (${errno.code ?? 'unknown error'})`,
    { cause: error },
  )
}

/**
 * Runs one mutation under the store-wide lock: makes sure `credentials/` exists with mode 0700,
 * sweeps leftovers of crashed writers in `credentials/` and `extraDirs`, and bumps the
 * generation file afterwards if anything changed, so resolvers in other processes reload (retried
 * once; if it still fails, `ERR_CREDENTIALS_IO` says the change was applied but not published).
 * An error of the mutation itself is never replaced by a failed bump. Raw I/O failures become
 * `ERR_CREDENTIALS_IO`.
 */
export async function mutate<T>(
  paths: StorePaths,
  options: WriterOptions,
  fn: (mutation: Mutation) => Promise<T>,
  extraDirs: readonly string[] = [],
): Promise<T> {
  try {
    await ensurePrivateDir(paths.root)
    const lockOptions = {
      timeoutMs: options.lockTimeoutMs,
      staleMs: options.staleLockMs,
      displayPath: relativeToState(paths, paths.lock),
    }
    return await withStoreLock(paths.lock, lockOptions, async () => {
      for (const dir of [paths.root, ...extraDirs]) await sweepTemporaries(dir, options.staleLockMs)
      let changed = false
      let result: T
      try {
        result = await fn({
          changed: () => {
            changed = true
          },
        })
      } catch (error) {
        // A partial change is still published, but the mutation's own error is what the caller gets.
        if (changed) await publish(paths).catch(() => {})
        throw error
      }
      if (changed) await publish(paths)
      return result
    })
  } catch (error) {
    throw asStoreError(paths, error)
  }
}
