import { readdir, rename, rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import {
  asideName,
  ensurePrivateDir,
  fsyncDir,
  TEMP_PREFIX,
  withoutTempNames,
  writeTempDir,
  writeTempFile,
} from './atomic-write.ts'
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

/**
 * Handed to a mutation: it stages every change here. Staging writes the new content to temporary
 * files at once (a full disk or a read-only file system fails here, with nothing changed); only
 * once the mutation has returned and the next generation file is written too are they all moved
 * into place, by renames that need no space.
 */
export interface Mutation {
  /** Stages `data` as the new content of `path` (mode 0600). */
  writeFile(path: string, data: string): Promise<void>
  /** Stages a new directory `path` (mode 0700) holding `files`; it must not exist yet. */
  createDir(path: string, files: Readonly<Record<string, string>>): Promise<void>
  /** Stages the removal of directory `path` (moved aside when committed, then deleted). */
  removeDir(path: string): void
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

/** What `errno` means to an operator: the words come first, the code after them. */
const IO_REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'an I/O error of the disk',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
}

/** `the disk is full (ENOSPC, credentials/alice/key)`: the reason, the code and the store-relative file. */
function describeIoError(paths: StorePaths, error: unknown, withPath = true): string {
  const errno = error as NodeJS.ErrnoException
  const code = errno.code ?? 'unknown error'
  const reason = IO_REASONS[code]
  const where = withPath && errno.path ? `, ${withoutTempNames(relativeToState(paths, errno.path))}` : ''
  return reason ? `${reason} (${code}${where})` : `${code}${where}`
}

type Step =
  | { readonly kind: 'place'; readonly temp: string; readonly target: string }
  | { readonly kind: 'remove'; readonly target: string; readonly trash: string }

/** The staged changes of one mutation, their temporary files, and how to commit or discard them. */
class Staging {
  readonly steps: Step[] = []
  private readonly temps: string[] = []

  constructor(private readonly paths: StorePaths) {}

  readonly mutation: Mutation = {
    writeFile: async (path, data) => {
      const temp = await writeTempFile(path, data)
      this.temps.push(temp)
      this.steps.push({ kind: 'place', temp, target: path })
    },
    createDir: async (path, files) => {
      const temp = await writeTempDir(path, files)
      this.temps.push(temp)
      this.steps.push({ kind: 'place', temp, target: path })
    },
    removeDir: (path) => {
      this.steps.push({ kind: 'remove', target: path, trash: asideName(path, 'removed') })
    },
  }

  /** Stages the next generation file (retried once: a transient error must not fail the change). */
  async stageGeneration(): Promise<string> {
    const write = async (): Promise<string> => {
      let current: GenerationFile | undefined
      try {
        current = await readGeneration(this.paths)
      } catch {
        current = undefined // a damaged generation file is only a change signal: start it over
      }
      const next: GenerationFile = { generation: (current?.generation ?? 0) + 1, token: randomToken() }
      return writeTempFile(this.paths.generation, `${JSON.stringify(next)}\n`)
    }
    const temp = await write().catch(() => write())
    this.temps.push(temp)
    return temp
  }

  /** Removes every temporary file not moved into place. */
  async discard(): Promise<void> {
    for (const temp of this.temps) await rm(temp, { recursive: true, force: true }).catch(() => {})
    this.temps.length = 0
  }

  /**
   * Moves everything into place in staging order, then publishes the generation (the last
   * rename), flushes the directories and deletes what was removed. A first step that fails
   * changed nothing and rethrows the raw error; a later one is reported as partly applied.
   */
  async commit(generationTemp: string): Promise<void> {
    const { paths } = this
    let applied = 0
    for (const step of this.steps) {
      try {
        if (step.kind === 'place') await rename(step.temp, step.target)
        else await rename(step.target, step.trash)
      } catch (error) {
        if (applied === 0) {
          await this.discard()
          throw error
        }
        const published = await this.publish(generationTemp).then(
          () => true,
          () => false,
        )
        await this.discard()
        throw new CredentialError(
          'ERR_CREDENTIALS_IO',
          `credential store write failed half-way: ${describeIoError(paths, error)}; part of the change ` +
            `was applied${published ? '' : ' and not published'} (run the command again, or check with \`credential list\`)`,
          { cause: error },
        )
      }
      applied++
    }
    try {
      await this.publish(generationTemp)
    } catch (error) {
      await this.discard()
      throw new CredentialError(
        'ERR_CREDENTIALS_IO',
        `the change was applied but not published: ${relativeToState(paths, paths.generation)} ` +
          `could not be updated: ${describeIoError(paths, error, false)}; ` +
          'running gateways may not see it until the next change',
        { cause: error },
      )
    }
    try {
      const dirs = new Set([...this.steps.map((step) => dirname(step.target)), paths.root])
      for (const dir of dirs) await fsyncDir(dir)
    } catch (error) {
      throw new CredentialError(
        'ERR_CREDENTIALS_IO',
        `the change was applied but flushing it to disk failed: ${describeIoError(paths, error)}`,
        { cause: error },
      )
    } finally {
      for (const step of this.steps)
        if (step.kind === 'remove') await rm(step.trash, { recursive: true, force: true }).catch(() => {})
    }
  }

  /** Renames the staged generation file into place (retried once). */
  private async publish(generationTemp: string): Promise<void> {
    const place = () => rename(generationTemp, this.paths.generation)
    await place().catch(place)
    this.temps.splice(this.temps.indexOf(generationTemp), 1)
  }
}

function asStoreError(paths: StorePaths, error: unknown): unknown {
  if (CredentialError.isInstance(error) || error instanceof TypeError || error instanceof RangeError) {
    return error
  }
  return new CredentialError(
    'ERR_CREDENTIALS_IO',
    `credential store write failed: ${describeIoError(paths, error)}; nothing was changed`,
    { cause: error },
  )
}

/**
 * Runs one mutation under the store-wide lock: makes sure `credentials/` exists with mode 0700,
 * sweeps leftovers of crashed writers in `credentials/` and `extraDirs`, lets `fn` stage its
 * changes, stages the next generation file, and only then moves everything into place (renames:
 * no space needed), the generation last, so resolvers in other processes reload. A mutation that
 * throws, or whose staging fails (a full disk, a read-only file system), changes nothing and
 * leaves no temporary file; its error is what the caller gets. Raw I/O failures become
 * `ERR_CREDENTIALS_IO` whose message says why in words (`the disk is full (ENOSPC, …)`) and that
 * nothing was changed.
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
      const staging = new Staging(paths)
      let result: T
      let generationTemp: string
      try {
        result = await fn(staging.mutation)
        if (staging.steps.length === 0) return result
        generationTemp = await staging.stageGeneration()
      } catch (error) {
        await staging.discard()
        throw error
      }
      await staging.commit(generationTemp)
      return result
    })
  } catch (error) {
    throw asStoreError(paths, error)
  }
}
