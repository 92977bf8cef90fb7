import { readdir } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { SchedulerError } from './errors.ts'
import { readSmallFile } from './fs-util.ts'
import type { SchedulerPaths } from './paths.ts'
import { isTaskId, MAX_TASK_SOURCE_BYTES, parseTaskSource, type TaskDefinition } from './task-source.ts'

/** A file in `knowledge/tasks/` that is not a valid task, and why (one line). */
export interface InvalidTask {
  /** File name inside `knowledge/tasks/`. */
  readonly file: string
  /** The task id when the file name is one. */
  readonly id?: string
  readonly problem: string
}

/** Every task source, read now. */
export interface TaskCatalog {
  readonly tasks: readonly TaskDefinition[]
  readonly invalid: readonly InvalidTask[]
}

/** Most files looked at in `knowledge/tasks/` (more are reported as one problem). */
export const MAX_TASK_FILES = 1000

/**
 * Reads every `knowledge/tasks/*.yml`. Each file is validated on its own: an invalid one is
 * reported and never hides the others. A missing directory is an empty catalog; an unreadable one
 * throws `ERR_SCHEDULER_IO` (a sync failure).
 */
export async function readTaskCatalog(paths: Pick<SchedulerPaths, 'tasksDir'>): Promise<TaskCatalog> {
  let names: string[]
  try {
    names = (await readdir(paths.tasksDir)).sort()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { tasks: [], invalid: [] }
    throw new SchedulerError(
      'ERR_SCHEDULER_IO',
      `cannot read knowledge/tasks/ (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: error },
    )
  }
  const tasks: TaskDefinition[] = []
  const invalid: InvalidTask[] = []
  let looked = 0
  for (const name of names) {
    if (name.startsWith('.')) continue
    if (!name.endsWith('.yml')) {
      if (name.endsWith('.yaml'))
        invalid.push({ file: printable(name), problem: 'task sources end in .yml; this file is ignored' })
      continue
    }
    if (++looked > MAX_TASK_FILES) {
      invalid.push({
        file: printable(name),
        problem: `more than ${MAX_TASK_FILES} task files; the rest are ignored`,
      })
      break
    }
    const id = name.slice(0, -'.yml'.length)
    if (!isTaskId(id)) {
      invalid.push({ file: printable(name), problem: 'the file name is not a valid task id' })
      continue
    }
    try {
      tasks.push(await readTaskFile(join(paths.tasksDir, name), id))
    } catch (error) {
      invalid.push({ file: name, id, problem: problemOf(error) })
    }
  }
  return { tasks, invalid }
}

/** Reads and validates one task file (no symlinks, at most 1 MiB). */
export async function readTaskFile(path: string, id: string): Promise<TaskDefinition> {
  const bytes = await readSmallFile(path, MAX_TASK_SOURCE_BYTES)
  if (bytes === undefined) throw new SchedulerError('ERR_SCHEDULER_NOT_FOUND', `no task ${id}`)
  return parseTaskSource(id, bytes)
}

/** The one-line message of a validation or read error. */
export function problemOf(error: unknown): string {
  if (SchedulerError.isInstance(error)) return error.message
  return `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`
}

/** A file name as shown in a report: printable ASCII, at most 80 characters. */
export function printable(name: string): string {
  const clean = basename(name).replace(/[^\x20-\x7e]/g, '?')
  return clean.length > 80 ? `${clean.slice(0, 80)}…` : clean
}
