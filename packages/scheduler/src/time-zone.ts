/**
 * Zone names answered without a date formatter: the canonical IANA zones ICU lists, and UTC/GMT
 * under their usual names. Creating an `Intl.DateTimeFormat` maps about 5 MiB of ICU's locale data
 * into the process for good; `sallyport up` checks the configured zone at every start, and this
 * keeps that check from growing the gateway's idle memory. Built on first use.
 */
let knownZones: ReadonlySet<string> | undefined

/** `true` when `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 100) return false
  knownZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC', 'GMT', 'Etc/GMT'])
  if (knownZones.has(zone)) return true
  // Aliases (`US/Eastern`), other spellings and unknown names: the formatter decides.
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** The host's time zone (the default of `assistant.timezone`). */
export function hostTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
}
