import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { link, open, readdir, stat, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { SchedulerError } from './errors.ts'
import { readSmallFile } from './fs-util.ts'
import { printable } from './task-files.ts'
import { isTaskId, MAX_TASK_SOURCE_BYTES, parseTaskSource, type TaskDefinition } from './task-source.ts'

// File helpers of the task helper: names of sources and backups, reading a source outside
// knowledge/tasks/, the files of a restore, and exclusive creation.

/** Most task files one restore stages. */
export const MAX_RESTORE_FILES = 200

const BACKUP_NAME = /^(.+)-(\d{8}T\d{9}Z)\.yml$/

/** `<id>.yml` → id; `<id>-<UTC time>.yml` (a backup) → id; anything else → undefined. */
export function idFromFileName(name: string): string | undefined {
  const backup = BACKUP_NAME.exec(name)
  if (backup?.[1] && isTaskId(backup[1])) return backup[1]
  if (name.endsWith('.yml') && isTaskId(name.slice(0, -4))) return name.slice(0, -4)
  return undefined
}

export async function readSource(path: string, id: string): Promise<TaskDefinition> {
  const bytes = await readSmallFile(path, MAX_TASK_SOURCE_BYTES)
  if (bytes === undefined)
    throw new SchedulerError('ERR_SCHEDULER_NOT_FOUND', `${printable(path)} does not exist`)
  return parseTaskSource(id, bytes)
}

export async function restoreCandidates(backup: string): Promise<string[]> {
  const info = await stat(backup).catch(() => undefined)
  if (!info) throw new SchedulerError('ERR_SCHEDULER_NOT_FOUND', `${printable(backup)} does not exist`)
  if (info.isFile()) return [backup]
  if (!info.isDirectory())
    throw new SchedulerError('ERR_SCHEDULER_IO', `${printable(backup)} is not a file or a directory`)
  const names = (await readdir(backup))
    .filter((name) => name.endsWith('.yml') && !name.startsWith('.'))
    // Newest first: of several backups of one id, the newest is the one staged.
    .sort()
    .reverse()
  if (names.length > MAX_RESTORE_FILES)
    throw new SchedulerError(
      'ERR_SCHEDULER_INVALID_TASK',
      `more than ${MAX_RESTORE_FILES} task files in one restore`,
    )
  return names.map((name) => join(backup, name))
}

/** Creates `path` with `text`; `ERR_SCHEDULER_EXISTS` when it exists (also as a symlink). */
export async function writeExclusive(path: string, text: string, id: string): Promise<void> {
  // Written whole to a temporary name, then published with link(), which fails if the name is
  // taken: a sync reading the directory meanwhile never sees a partly written source.
  const temp = join(dirname(path), `.${id}.${randomBytes(6).toString('hex')}.tmp`)
  const fail = (error: unknown): SchedulerError =>
    new SchedulerError(
      'ERR_SCHEDULER_IO',
      `cannot write knowledge/tasks/${id}.yml (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: error },
    )
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(
      temp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    )
  } catch (error) {
    throw fail(error)
  }
  try {
    try {
      await handle.writeFile(text, 'utf8')
      await handle.sync()
    } finally {
      await handle.close()
    }
    await link(temp, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new SchedulerError('ERR_SCHEDULER_EXISTS', `task ${id} exists already (remove it first)`)
    throw fail(error)
  } finally {
    await unlink(temp).catch(() => {})
  }
}
