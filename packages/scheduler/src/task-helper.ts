import { mkdir, rename, stat, unlink } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { readHostSettings, setTaskEnabled } from './activation.ts'
import { SchedulerError } from './errors.ts'
import { type TaskLockOptions, withTaskLock } from './lock.ts'
import { DEFAULT_OUTPUT } from './output-path.ts'
import type { SchedulerPaths } from './paths.ts'
import { idFromFileName, readSource, restoreCandidates, writeExclusive } from './source-files.ts'
import { type InvalidTask, printable, problemOf, readTaskCatalog, readTaskFile } from './task-files.ts'
import {
  checkTaskId,
  parseTaskSource,
  renderTaskSource,
  type TaskDefinition,
  withGuidance,
} from './task-source.ts'

/**
 * Brings the running scheduler in line with the files after a change. Resolves `applied` when a
 * running scheduler re-read them, `deferred` when none runs (the next start binds them); throws
 * `ERR_SCHEDULER_RECONCILE` when the scheduler refused, and the helper rolls the change back.
 */
export type Reconciler = (change: {
  readonly id?: string
  /** False for a change that only deactivates (pause, remove): never rolled back for a failed sync. */
  readonly activates?: boolean
}) => Promise<'applied' | 'deferred'>

export interface TaskHelperOptions {
  readonly paths: SchedulerPaths
  /** Default: none (changes are deferred to the scheduler's next sync). */
  readonly reconcile?: Reconciler
  readonly now?: () => Date
  readonly lock?: TaskLockOptions
}

/** A task with its host-local activation. */
export interface TaskView {
  readonly task: TaskDefinition
  /** `active`: scheduled; `paused`: has a schedule, not in scheduler.enabled; `manual`: no schedule. */
  readonly state: 'active' | 'paused' | 'manual'
}

export interface TaskListing {
  readonly tasks: readonly TaskView[]
  readonly invalid: readonly InvalidTask[]
  readonly timezone: string
}

/** What `create` takes: a task source without its version, and the id. */
export interface CreateTaskInput {
  readonly id: string
  readonly prompt: string
  readonly schedule?: string | undefined
  readonly timeout?: string | number | undefined
  readonly model?: string | undefined
  readonly output?: string | undefined
  readonly description?: string | undefined
  /** Leave a scheduled task paused (not in scheduler.enabled). */
  readonly paused?: boolean | undefined
}

export interface MutationResult {
  readonly reconciled: 'applied' | 'deferred'
}

export interface RestoreResult {
  /** Staged as paused, for review before `resume`. */
  readonly staged: readonly TaskDefinition[]
  readonly refused: readonly InvalidTask[]
  readonly reconciled: 'applied' | 'deferred'
}

/**
 * The task helper: the one mutation boundary for host-CLI and assistant-created task operations
 * (spec, scheduler rule 12). Every change takes the task lock, validates, writes atomically,
 * reconciles the running scheduler and rolls back when that fails. `create` prepends the
 * hostile-content guidance; `remove` keeps the definition under `knowledge/disabled-tasks/`;
 * `restore` stages definitions paused; activation changes only `scheduler.enabled`.
 */
export function createTaskHelper(options: TaskHelperOptions) {
  const { paths } = options
  const now = options.now ?? (() => new Date())
  const reconcile: Reconciler = options.reconcile ?? (async () => 'deferred')
  const locked = <T>(work: () => Promise<T>): Promise<T> => withTaskLock(paths.lockFile, work, options.lock)

  const stateOf = (task: TaskDefinition, enabled: ReadonlySet<string>): TaskView['state'] =>
    task.schedule === undefined ? 'manual' : enabled.has(task.id) ? 'active' : 'paused'

  const taskPath = (id: string): string => join(paths.tasksDir, `${checkTaskId(id)}.yml`)

  async function settle(
    id: string | undefined,
    rollback: () => Promise<void>,
    activates = true,
  ): Promise<'applied' | 'deferred'> {
    try {
      return await reconcile({ ...(id !== undefined && { id }), activates })
    } catch (error) {
      await rollback()
      throw SchedulerError.isInstance(error)
        ? error
        : new SchedulerError(
            'ERR_SCHEDULER_RECONCILE',
            'the scheduler could not take the change; it was rolled back',
            {
              cause: error,
            },
          )
    }
  }

  return {
    paths,

    /** Every task, its state, and every invalid file. */
    async list(): Promise<TaskListing> {
      const [catalog, host] = await Promise.all([readTaskCatalog(paths), readHostSettings(paths)])
      return {
        tasks: catalog.tasks.map((task) => ({ task, state: stateOf(task, host.enabled) })),
        invalid: catalog.invalid,
        timezone: host.timezone,
      }
    },

    /** One task (`ERR_SCHEDULER_NOT_FOUND`, or `ERR_SCHEDULER_INVALID_TASK` with the problem). */
    async show(id: string): Promise<TaskView & { readonly timezone: string }> {
      const task = await readTaskFile(taskPath(id), id)
      const host = await readHostSettings(paths)
      return { task, state: stateOf(task, host.enabled), timezone: host.timezone }
    },

    /**
     * Writes `knowledge/tasks/<id>.yml` (never over an existing one) with the guidance in front of
     * the prompt, and activates its schedule unless `paused`.
     */
    async create(input: CreateTaskInput): Promise<TaskView & MutationResult> {
      const id = checkTaskId(input.id)
      if (typeof input.prompt !== 'string' || input.prompt.trim().length === 0)
        throw new SchedulerError('ERR_SCHEDULER_INVALID_TASK', 'prompt: must not be empty')
      const text = renderTaskSource({
        version: 1,
        ...(input.description !== undefined && { description: input.description }),
        ...(input.schedule !== undefined && { schedule: input.schedule }),
        ...(input.timeout !== undefined && { timeout: input.timeout }),
        ...(input.model !== undefined && { model: input.model }),
        ...(input.output !== undefined && { output: input.output }),
        prompt: withGuidance(input.prompt),
      })
      const task = parseTaskSource(id, text)
      return locked(async () => {
        await mkdir(paths.tasksDir, { recursive: true, mode: 0o700 })
        const path = taskPath(id)
        await writeExclusive(path, text, id)
        const activate = task.schedule !== undefined && input.paused !== true
        let changed = false
        try {
          // Always written: a leftover entry of an earlier task of this id must not activate it.
          changed = await setTaskEnabled(paths, id, activate)
        } catch (error) {
          await unlink(path).catch(() => {})
          throw error
        }
        const reconciled = await settle(
          id,
          async () => {
            if (changed) await setTaskEnabled(paths, id, !activate).catch(() => {})
            await unlink(path).catch(() => {})
          },
          activate,
        )
        return {
          task,
          state: activate ? 'active' : task.schedule === undefined ? 'manual' : 'paused',
          reconciled,
        }
      })
    },

    /** Activates the task's schedule (`scheduler.enabled`). The task must be valid and scheduled. */
    async resume(id: string): Promise<MutationResult & { readonly changed: boolean }> {
      return locked(async () => {
        const task = await readTaskFile(taskPath(id), id)
        if (task.schedule === undefined)
          throw new SchedulerError(
            'ERR_SCHEDULER_INVALID_TASK',
            `${id} has no schedule: run it with \`task run\``,
          )
        const changed = await setTaskEnabled(paths, id, true)
        const reconciled = await settle(id, async () => {
          if (changed) await setTaskEnabled(paths, id, false).catch(() => {})
        })
        return { changed, reconciled }
      })
    },

    /** Deactivates the task's schedule. Also for an invalid or missing source (nothing to read). */
    async pause(id: string): Promise<MutationResult & { readonly changed: boolean }> {
      checkTaskId(id)
      return locked(async () => {
        const changed = await setTaskEnabled(paths, id, false)
        const reconciled = await settle(
          id,
          async () => {
            if (changed) await setTaskEnabled(paths, id, true).catch(() => {})
          },
          false,
        )
        return { changed, reconciled }
      })
    },

    /**
     * Moves `knowledge/tasks/<id>.yml` to `knowledge/disabled-tasks/<id>-<UTC time>.yml` and drops
     * its activation. Returns the backup's file name.
     */
    async remove(id: string): Promise<MutationResult & { readonly backup: string }> {
      const source = taskPath(id)
      return locked(async () => {
        const info = await stat(source).catch(() => undefined)
        if (!info) throw new SchedulerError('ERR_SCHEDULER_NOT_FOUND', `no task ${id}`)
        await mkdir(paths.disabledTasksDir, { recursive: true, mode: 0o700 })
        const stamp = now().toISOString().replace(/[-:.]/g, '')
        const backupName = `${id}-${stamp}.yml`
        const backup = join(paths.disabledTasksDir, backupName)
        if (await stat(backup).catch(() => undefined))
          throw new SchedulerError('ERR_SCHEDULER_EXISTS', `a backup named ${backupName} exists already`)
        await rename(source, backup)
        let changed = false
        try {
          changed = await setTaskEnabled(paths, id, false)
        } catch (error) {
          await rename(backup, source).catch(() => {})
          throw error
        }
        const reconciled = await settle(
          id,
          async () => {
            await rename(backup, source).catch(() => {})
            if (changed) await setTaskEnabled(paths, id, true).catch(() => {})
          },
          false,
        )
        return { backup: backupName, reconciled }
      })
    },

    /**
     * Validates without changing anything: every task source, one task id, or a file path (for
     * example a backup before restoring it).
     */
    async validate(
      target?: string,
    ): Promise<{ readonly valid: readonly TaskDefinition[]; readonly invalid: readonly InvalidTask[] }> {
      if (target === undefined) {
        const catalog = await readTaskCatalog(paths)
        return { valid: catalog.tasks, invalid: catalog.invalid }
      }
      const isPath = target.includes('/') || target.endsWith('.yml')
      const id = isPath ? idFromFileName(basename(target)) : target
      if (id === undefined)
        return {
          valid: [],
          invalid: [
            { file: printable(target), problem: 'the file name is not <task id>.yml or a backup name' },
          ],
        }
      try {
        const task = isPath ? await readSource(target, id) : await readTaskFile(taskPath(id), id)
        return { valid: [task], invalid: [] }
      } catch (error) {
        if (SchedulerError.isInstance(error) && error.code === 'ERR_SCHEDULER_INVALID_ID') throw error
        return {
          valid: [],
          invalid: [{ file: printable(isPath ? target : `${id}.yml`), id, problem: problemOf(error) }],
        }
      }
    },

    /**
     * Stages task definitions from a backup (a `.yml` file, or a directory of them: a copy of
     * `knowledge/tasks/` or `knowledge/disabled-tasks/`) into `knowledge/tasks/`, PAUSED: only
     * files that pass the strict schema, under ids not taken, and never activated, so the user
     * reviews schedule, policy, tools, secrets and result destination before `resume`.
     */
    async restore(backup: string): Promise<RestoreResult> {
      const files = await restoreCandidates(backup)
      return locked(async () => {
        const staged: TaskDefinition[] = []
        const refused: InvalidTask[] = []
        const written: string[] = []
        const deactivated: string[] = []
        const seen = new Set<string>()
        await mkdir(paths.tasksDir, { recursive: true, mode: 0o700 })
        for (const file of files) {
          const name = basename(file)
          const id = idFromFileName(name)
          if (id === undefined) {
            refused.push({
              file: printable(name),
              problem: 'the file name is not <task id>.yml or a backup name',
            })
            continue
          }
          if (seen.has(id)) {
            refused.push({
              file: printable(name),
              id,
              problem: 'another file of this restore has the same id',
            })
            continue
          }
          seen.add(id)
          let task: TaskDefinition
          try {
            task = await readSource(file, id)
          } catch (error) {
            refused.push({ file: printable(name), id, problem: problemOf(error) })
            continue
          }
          const text = renderTaskSource({
            version: 1,
            ...(task.description !== undefined && { description: task.description }),
            ...(task.schedule !== undefined && { schedule: task.schedule }),
            timeout: `${task.timeoutSeconds}s`,
            ...(task.model !== undefined && { model: task.model }),
            ...(task.output !== undefined && { output: task.output }),
            prompt: withGuidance(task.prompt),
          })
          try {
            await writeExclusive(taskPath(id), text, id)
          } catch (error) {
            refused.push({ file: printable(name), id, problem: problemOf(error) })
            continue
          }
          written.push(taskPath(id))
          if (await setTaskEnabled(paths, id, false)) deactivated.push(id)
          staged.push(parseTaskSource(id, text))
        }
        const reconciled = await settle(undefined, async () => {
          for (const path of written) await unlink(path).catch(() => {})
          for (const id of deactivated) await setTaskEnabled(paths, id, true).catch(() => {})
        })
        return { staged, refused, reconciled }
      })
    },
  }
}

export type TaskHelper = ReturnType<typeof createTaskHelper>

/** The output a task writes when it names none. */
export const defaultOutput = (task: Pick<TaskDefinition, 'output'>): string => task.output ?? DEFAULT_OUTPUT

export { idFromFileName, MAX_RESTORE_FILES } from './source-files.ts'
