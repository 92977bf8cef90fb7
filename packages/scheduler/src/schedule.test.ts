import { describe, expect, it, vi } from 'vitest'
import { checkSchedule, compileSchedule, hostTimeZone, isTimeZone, SCHEDULE_NICKNAMES } from './schedule.ts'

const iso = (date: Date | undefined): string | undefined => date?.toISOString()

/** The next `count` slots after `from`. */
function slots(expression: string, zone: string, from: string, count: number): string[] {
  const schedule = compileSchedule(expression, zone)
  const out: string[] = []
  let at = new Date(from)
  for (let i = 0; i < count; i++) {
    const next = schedule.nextAfter(at)
    if (!next) break
    out.push(next.toISOString())
    at = next
  }
  return out
}

describe('checkSchedule', () => {
  it.each([
    '0 7 * * 1-5',
    '*/15 * * * *',
    '0 0 1 1 *',
    '30 2 * * 0',
    '0 9-17 * * MON-FRI',
    '0 0 29 2 *',
    '0 0 L * *',
  ])('accepts %j', (expression) => {
    expect(checkSchedule(expression)).toBeUndefined()
  })

  it.each([...SCHEDULE_NICKNAMES, '@DAILY', '@Hourly'])('accepts the nickname %j', (nickname) => {
    expect(checkSchedule(nickname)).toBeUndefined()
  })

  it.each(['* * * * * *', '0 0 7 * * 1-5', '* * * *', '*', '', '0 0 1 1 * 2030'])(
    'refuses %j: not five fields',
    (expression) => {
      expect(checkSchedule(expression)).toContain('five cron fields')
    },
  )

  it.each(['@reboot', '@every 5m', '@midnight', '@'])('refuses the unsupported nickname %j', (expression) => {
    expect(checkSchedule(expression)).toContain('five cron fields')
  })

  it.each([
    '60 * * * *',
    '* 24 * * *',
    '* * 32 * *',
    '* * * 13 *',
    '0 0 * * 8',
    'a b c d e',
    '*/0 * * * *',
    '5-1 * * * *',
  ])('refuses the invalid values %j', (expression) => {
    expect(checkSchedule(expression)).toMatch(/^not a valid cron expression/)
  })

  it.each(['0 0 31 2 *', '0 0 30 2 *', '0 0 31 4 *'])('refuses %j: it never fires', (expression) => {
    expect(checkSchedule(expression)).toBe('never fires')
  })

  it('refuses leading or trailing spaces', () => {
    expect(checkSchedule(' 0 7 * * *')).toContain('spaces')
    expect(checkSchedule('0 7 * * * ')).toContain('spaces')
    expect(checkSchedule('@daily\n')).toContain('spaces')
  })
})

describe('isTimeZone / hostTimeZone', () => {
  it('knows IANA zones and refuses others', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata'])
      expect(isTimeZone(zone)).toBe(true)
    for (const zone of ['', 'Mars/Olympus', 'Europe/Nowhere', 'x'.repeat(101)])
      expect(isTimeZone(zone)).toBe(false)
  })

  it('answers as the date formatter does: every listed zone, aliases, other spellings', () => {
    const formatterKnows = (zone: string): boolean => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: zone })
        return true
      } catch {
        return false
      }
    }
    const zones = [
      ...Intl.supportedValuesOf('timeZone'),
      ...['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT', 'Etc/GMT+5', 'US/Eastern', 'Asia/Calcutta', 'utc'],
      ...['europe/paris', 'Etc/GMT+15', 'UTC ', 'Europe//Paris', '../UTC', 'Europe/Paris\n'],
    ]
    expect(zones.length).toBeGreaterThan(300)
    for (const zone of zones) expect(isTimeZone(zone), zone).toBe(formatterKnows(zone))
  })

  it('a listed zone or UTC is known without a date formatter (its locale data stays unmapped)', () => {
    const formatter = vi.spyOn(Intl, 'DateTimeFormat')
    try {
      for (const zone of ['Europe/Berlin', 'America/New_York', 'UTC', 'Etc/UTC'])
        expect(isTimeZone(zone)).toBe(true)
      expect(formatter).not.toHaveBeenCalled()
      expect(isTimeZone('US/Eastern')).toBe(true)
      expect(formatter).toHaveBeenCalledTimes(1)
    } finally {
      formatter.mockRestore()
    }
  })

  it('the host zone is a valid zone', () => {
    expect(isTimeZone(hostTimeZone())).toBe(true)
  })
})

describe('compileSchedule', () => {
  it('UTC: weekdays at 07:00, strictly after the given time', () => {
    // 2026-01-09 is a Friday.
    expect(slots('0 7 * * 1-5', 'UTC', '2026-01-09T06:59:59.999Z', 3)).toEqual([
      '2026-01-09T07:00:00.000Z',
      '2026-01-12T07:00:00.000Z',
      '2026-01-13T07:00:00.000Z',
    ])
    const schedule = compileSchedule('0 7 * * 1-5', 'UTC')
    expect(iso(schedule.nextAfter(new Date('2026-01-09T07:00:00.000Z')))).toBe('2026-01-12T07:00:00.000Z')
    expect(schedule.expression).toBe('0 7 * * 1-5')
    expect(schedule.timezone).toBe('UTC')
  })

  it('nicknames compile', () => {
    expect(slots('@hourly', 'UTC', '2026-01-01T10:20:00Z', 2)).toEqual([
      '2026-01-01T11:00:00.000Z',
      '2026-01-01T12:00:00.000Z',
    ])
    expect(slots('@daily', 'Europe/Berlin', '2026-01-01T10:20:00Z', 1)).toEqual(['2026-01-01T23:00:00.000Z'])
  })

  it('the zone decides the instant', () => {
    const from = '2026-01-15T00:00:00Z'
    expect(slots('0 9 * * *', 'UTC', from, 1)).toEqual(['2026-01-15T09:00:00.000Z'])
    expect(slots('0 9 * * *', 'Europe/Berlin', from, 1)).toEqual(['2026-01-15T08:00:00.000Z'])
    expect(slots('0 9 * * *', 'America/New_York', from, 1)).toEqual(['2026-01-15T14:00:00.000Z'])
  })

  it('Europe/Berlin spring forward (2026-03-29): the 02:30 slot runs at 03:00 local, 01:00Z', () => {
    expect(slots('30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', 3)).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ])
  })

  it('Europe/Berlin fall back (2026-10-25): the 02:30 slot runs once, at its first occurrence', () => {
    const got = slots('30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', 3)
    expect(got).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z'])
    expect(got.filter((slot) => slot.startsWith('2026-10-25'))).toHaveLength(1)
  })

  it('America/New_York spring forward (2026-03-08) and fall back (2026-11-01)', () => {
    // 02:30 does not exist on 03-08: it runs at 03:00 EDT = 07:00Z.
    expect(slots('30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', 2)).toEqual([
      '2026-03-08T07:00:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ])
    // 01:30 happens twice on 11-01 (EDT 05:30Z, EST 06:30Z): it runs once.
    expect(slots('30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', 2)).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ])
  })

  it('a UTC schedule ignores daylight saving', () => {
    expect(slots('30 2 * * *', 'UTC', '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-29T02:30:00.000Z',
      '2026-03-30T02:30:00.000Z',
    ])
  })

  it('throws RangeError for an invalid zone or expression', () => {
    expect(() => compileSchedule('0 * * * *', 'Mars/Olympus')).toThrow(RangeError)
    expect(() => compileSchedule('0 * * * *', '')).toThrow(RangeError)
    expect(() => compileSchedule('0 0 31 2 *', 'UTC')).toThrow(/never fires/)
    expect(() => compileSchedule('* * * * * *', 'UTC')).toThrow(RangeError)
  })

  it('every minute: the next slot is always within 60 s and on a minute', () => {
    const schedule = compileSchedule('* * * * *', 'Europe/Berlin')
    for (const from of ['2026-03-29T00:59:30Z', '2026-10-25T00:59:59.999Z', '2026-06-01T12:00:00Z']) {
      const next = schedule.nextAfter(new Date(from))!
      expect(next.getTime() - new Date(from).getTime()).toBeGreaterThan(0)
      expect(next.getTime() - new Date(from).getTime()).toBeLessThanOrEqual(60_000)
      expect(next.getUTCSeconds()).toBe(0)
    }
  })
})
