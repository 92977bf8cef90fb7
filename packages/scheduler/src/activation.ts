import { SchedulerError } from './errors.ts'
import { readTextIfPresent, writeFileAtomic } from './fs-util.ts'
import { hostTimeZone, isTimeZone } from './schedule.ts'
import { isTaskId } from './task-source.ts'

/**
 * The host-local settings the scheduler reads from `sallyport.json` on every sync:
 * `scheduler.enabled`, the ids of the tasks whose schedules are active (`false` or absent: none),
 * and `assistant.timezone` (default: the host's).
 */
export interface HostSettings {
  readonly enabled: ReadonlySet<string>
  readonly timezone: string
}

/** Reads `sallyport.json`. A missing file means no task is active and the host's time zone. */
export async function readHostSettings(stackConfig: string): Promise<HostSettings> {
  const document = await readDocument(stackConfig)
  return {
    enabled: new Set(enabledList(document)),
    timezone: timezoneOf(document),
  }
}

/**
 * Adds or removes `id` in `scheduler.enabled` of `sallyport.json`, leaving every other key as it
 * was (atomic replace, same mode). Returns whether the list changed. Call under the task lock.
 */
export async function setTaskEnabled(stackConfig: string, id: string, enabled: boolean): Promise<boolean> {
  const document = (await readDocument(stackConfig)) ?? { version: 1 }
  const list = enabledList(document)
  const has = list.includes(id)
  if (has === enabled) return false
  const next = enabled ? [...list, id].sort() : list.filter((item) => item !== id)
  const scheduler = isObject(document.scheduler) ? document.scheduler : {}
  const updated = { ...document, scheduler: { ...scheduler, enabled: next } }
  try {
    await writeFileAtomic(stackConfig, `${JSON.stringify(updated, null, 2)}\n`)
  } catch (error) {
    throw new SchedulerError(
      'ERR_SCHEDULER_IO',
      `cannot write sallyport.json (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: error },
    )
  }
  return true
}

type Document = Record<string, unknown>

async function readDocument(path: string): Promise<Document | undefined> {
  let text: string | undefined
  try {
    text = await readTextIfPresent(path)
  } catch (error) {
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      `cannot read sallyport.json (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: error },
    )
  }
  if (text === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new SchedulerError('ERR_SCHEDULER_CONFIG', 'sallyport.json is not valid JSON')
  }
  if (!isObject(value))
    throw new SchedulerError('ERR_SCHEDULER_CONFIG', 'sallyport.json is not a JSON object')
  return value
}

function enabledList(document: Document | undefined): string[] {
  const scheduler = document?.scheduler
  if (scheduler === undefined) return []
  if (!isObject(scheduler))
    throw new SchedulerError('ERR_SCHEDULER_CONFIG', 'scheduler in sallyport.json is not an object')
  const enabled = scheduler.enabled
  if (enabled === undefined || enabled === false) return []
  if (enabled === true)
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      'scheduler.enabled in sallyport.json is a list of task ids (true would activate every source, imported ones too)',
    )
  if (!Array.isArray(enabled) || enabled.some((id) => typeof id !== 'string' || !isTaskId(id)))
    throw new SchedulerError(
      'ERR_SCHEDULER_CONFIG',
      'scheduler.enabled in sallyport.json must be a list of task ids',
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
