import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { z } from 'zod'
import { SchedulerError } from './errors.ts'
import type { SchedulerPaths } from './paths.ts'
import { describeIssues, TASK_ID_PATTERN } from './task-source.ts'

// `init` writes the default without the schema (zod) or the task sources (yaml): it lives in
// `engine-defaults.ts` (the light `./stack` entry exports it) and is re-exported here.
export { defaultEngineConfig } from './engine-defaults.ts'

/**
 * `config/akm/config.json`: the scheduled engine. It attaches to the stack's already-running,
 * authenticated native server and selects the restricted `scheduled` profile; its only secret is
 * the native API password, read from the file it names. No provider credential is ever in it.
 */
export const EngineConfigSchema = z
  .object({
    version: z.literal(1),
    engine: z
      .object({
        kind: z.literal('opencode-attach'),
        server: z.literal('native'),
        agent: z.literal('scheduled'),
        /** Relative to `config/akm/`; must be the stack's `state/native-password`. */
        passwordFile: z.string().min(1).max(4096),
      })
      .strict(),
    tasks: z
      .object({
        source: z.string().min(1).max(4096),
        disabled: z.string().min(1).max(4096),
      })
      .strict(),
    /**
     * `enabled`: the ids of the tasks whose schedules are active, the one place activation lives
     * (never a task source). `sallyport task pause|resume|create` and the task tools edit it.
     */
    scheduler: z
      .object({ enabled: z.array(z.string().regex(TASK_ID_PATTERN, 'must be a task id')).max(1000) })
      .strict()
      .optional(),
  })
  .strict()
export type EngineConfig = z.infer<typeof EngineConfigSchema>

/** Where the engine attaches, resolved from its configuration and the stack's record. */
export interface EngineTarget {
  readonly passwordFile: string
  readonly agent: string
}

/**
 * Reads and checks the engine configuration: the strict schema, and paths that stay the stack's
 * own (the password file is `state/native-password`; tasks are `knowledge/tasks` and
 * `knowledge/disabled-tasks`). Throws `ERR_SCHEDULER_CONFIG` with one line.
 */
export async function readEngineConfig(paths: SchedulerPaths): Promise<EngineTarget> {
  let text: string
  try {
    text = await readFile(paths.engineConfig, 'utf8')
  } catch (error) {
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      `cannot read config/akm/config.json (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: error },
    )
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new SchedulerError('ERR_SCHEDULER_CONFIG', 'config/akm/config.json is not valid JSON')
  }
  const parsed = EngineConfigSchema.safeParse(value)
  if (!parsed.success)
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      `config/akm/config.json: ${describeIssues(parsed.error)}`,
    )
  const config = parsed.data
  const passwordFile = resolve(paths.akmDir, config.engine.passwordFile)
  if (passwordFile !== paths.nativePassword)
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      'config/akm/config.json: engine.passwordFile must be ../../state/native-password',
    )
  if (resolve(paths.akmDir, config.tasks.source) !== paths.tasksDir)
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      'config/akm/config.json: tasks.source must be ../../knowledge/tasks',
    )
  if (resolve(paths.akmDir, config.tasks.disabled) !== paths.disabledTasksDir)
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      'config/akm/config.json: tasks.disabled must be ../../knowledge/disabled-tasks',
    )
  return { passwordFile, agent: config.engine.agent }
}
