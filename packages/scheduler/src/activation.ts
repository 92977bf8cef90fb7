import { SchedulerError } from './errors.ts'
import { readSmallFile, writeFileAtomic } from './fs-util.ts'
import { type SchedulerPaths, STACK_CONFIG_FILE } from './paths.ts'
import { hostTimeZone, isTimeZone } from './schedule.ts'
import { isTaskId } from './task-source.ts'

/**
 * The host-local settings the scheduler reads on every sync: `scheduler.enabled` of
 * `config/akm/config.json`, the ids of the tasks whose schedules are active (absent: none; the
 * directory is writable for atomic updates, also in the container), and `assistant.timezone` of
 * `sallyport.json` (default: the host's).
 */
export interface HostSettings {
  readonly enabled: ReadonlySet<string>
  readonly timezone: string
}

/** Reads both files. A missing file means no task is active / the host's time zone. */
export async function readHostSettings(
  paths: Pick<SchedulerPaths, 'engineConfig' | 'stackConfig'>,
): Promise<HostSettings> {
  const [engine, stack] = await Promise.all([
    readDocument(paths.engineConfig, ENGINE),
    readDocument(paths.stackConfig, STACK),
  ])
  return { enabled: new Set(enabledList(engine)), timezone: timezoneOf(stack) }
}

/** Only the activation list (what a failed sync still applies: pause and remove always stop a task). */
export async function readEnabled(paths: Pick<SchedulerPaths, 'engineConfig'>): Promise<ReadonlySet<string>> {
  return new Set(enabledList(await readDocument(paths.engineConfig, ENGINE)))
}

/**
 * Adds or removes `id` in `scheduler.enabled` of `config/akm/config.json`, leaving every other
 * key as it was (atomic replace, same mode). Returns whether the list changed. Call under the
 * task lock.
 */
export async function setTaskEnabled(
  paths: Pick<SchedulerPaths, 'engineConfig'>,
  id: string,
  enabled: boolean,
): Promise<boolean> {
  const document = await readDocument(paths.engineConfig, ENGINE)
  if (document === undefined)
    throw new SchedulerError('ERR_SCHEDULER_CONFIG', `${ENGINE} is missing: run \`sallyport init\``)
  const list = enabledList(document)
  const has = list.includes(id)
  if (has === enabled) return false
  const next = enabled ? [...list, id].sort() : list.filter((item) => item !== id)
  const scheduler = isObject(document.scheduler) ? document.scheduler : {}
  const updated = { ...document, scheduler: { ...scheduler, enabled: next } }
  try {
    await writeFileAtomic(paths.engineConfig, `${JSON.stringify(updated, null, 2)}\n`)
  } catch (error) {
    throw new SchedulerError(
      'ERR_SCHEDULER_IO',
      `cannot write ${ENGINE} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: error },
    )
  }
  return true
}

type Document = Record<string, unknown>
/** Largest configuration file read. */
const MAX_CONFIG_BYTES = 1024 * 1024
const ENGINE = 'config/akm/config.json'
const STACK = STACK_CONFIG_FILE

async function readDocument(path: string, shown: string): Promise<Document | undefined> {
  let text: string | undefined
  try {
    // A regular file only, opened without blocking: a FIFO or a device must not hang a sync.
    text = (await readSmallFile(path, MAX_CONFIG_BYTES))?.toString('utf8')
  } catch (error) {
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      `cannot read ${shown} (${SchedulerError.isInstance(error) ? error.message : ((error as NodeJS.ErrnoException).code ?? 'error')})`,
      { cause: error },
    )
  }
  if (text === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new SchedulerError('ERR_SCHEDULER_CONFIG', `${shown} is not valid JSON`)
  }
  if (!isObject(value)) throw new SchedulerError('ERR_SCHEDULER_CONFIG', `${shown} is not a JSON object`)
  return value
}

function enabledList(document: Document | undefined): string[] {
  const scheduler = document?.scheduler
  if (scheduler === undefined) return []
  if (!isObject(scheduler))
    throw new SchedulerError('ERR_SCHEDULER_CONFIG', `scheduler in ${ENGINE} is not an object`)
  const enabled = scheduler.enabled
  if (enabled === undefined) return []
  if (typeof enabled === 'boolean')
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      `scheduler.enabled in ${ENGINE} is a list of task ids (true would activate every source, imported ones too)`,
    )
  if (!Array.isArray(enabled) || enabled.some((id) => typeof id !== 'string' || !isTaskId(id)))
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      `scheduler.enabled in ${ENGINE} must be a list of task ids`,
    )
  return [...new Set(enabled as string[])]
}

function timezoneOf(document: Document | undefined): string {
  const assistant = document?.assistant
  const zone = isObject(assistant) ? assistant.timezone : undefined
  if (zone === undefined) return hostTimeZone()
  if (typeof zone !== 'string' || !isTimeZone(zone))
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      'assistant.timezone in sallyport.json is not an IANA time zone',
    )
  return zone
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
