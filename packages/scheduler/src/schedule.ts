import { Cron } from 'croner'
import { isTimeZone } from './time-zone.ts'

// The time-zone checks need no cron library: they live in `time-zone.ts` (the light `./stack`
// entry exports them) and are re-exported here.
export { hostTimeZone, isTimeZone } from './time-zone.ts'

/** The cron nicknames a schedule may use instead of five fields. */
export const SCHEDULE_NICKNAMES = [
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@hourly',
] as const

/** A compiled schedule: the next slot strictly after a time, in its time zone. */
export interface CompiledSchedule {
  readonly expression: string
  readonly timezone: string
  /** The first slot strictly after `from`, or undefined when the pattern never fires again. */
  nextAfter(from: Date): Date | undefined
}

/**
 * Why `expression` is not a schedule, or undefined when it is one: exactly five fields (minute,
 * hour, day of month, month, day of week; no seconds, no years) or a nickname, and it must fire
 * at least once in the next five years.
 */
export function checkSchedule(expression: string): string | undefined {
  const trimmed = expression.trim()
  if (trimmed !== expression) return 'must not start or end with spaces'
  const isNickname = (SCHEDULE_NICKNAMES as readonly string[]).includes(expression.toLowerCase())
  if (!isNickname && expression.split(/\s+/).length !== 5)
    return 'must be five cron fields (minute hour day-of-month month day-of-week), e.g. "0 7 * * 1-5", or @hourly, @daily, @weekly, @monthly, @yearly'
  let cron: Cron
  try {
    cron = new Cron(expression, { paused: true, timezone: 'UTC' })
  } catch (error) {
    return `not a valid cron expression (${String((error as Error).message).replace(/^CronPattern: /, '')})`
  }
  const next = cron.nextRun(new Date(Date.UTC(2000, 0, 1)))
  cron.stop()
  if (next === null || next === undefined) return 'never fires'
  return undefined
}

/**
 * Compiles a schedule in `timezone`. Daylight-saving rules are croner's: a slot inside a skipped
 * hour runs at the first minute after the gap; a fixed time inside a repeated hour (`30 1 * * *`)
 * runs once, at its first occurrence, but a pattern with several slots in that hour
 * (`0,30 1 * * *`) fires in both copies of it. Throws `RangeError` for an invalid expression or zone (validate first).
 */
export function compileSchedule(expression: string, timezone: string): CompiledSchedule {
  const problem = checkSchedule(expression)
  if (problem) throw new RangeError(`schedule ${problem}`)
  if (!isTimeZone(timezone)) throw new RangeError('not an IANA time zone')
  const cron = new Cron(expression, { paused: true, timezone })
  return {
    expression,
    timezone,
    nextAfter(from) {
      return cron.nextRun(from) ?? undefined
    },
  }
}
