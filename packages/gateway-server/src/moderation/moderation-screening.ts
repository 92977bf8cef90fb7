import type { ScreeningHook, ScreeningVerdict } from '../screening.js'
import { screenLocally } from './local-screen.js'
import type { Moderator } from './moderator.js'

/**
 * The gateway's screening: the local screen first (no I/O, under 1 ms per 4 KiB; each part of the input
 * and the whole); what it passes flows on, what it escalates goes to the moderator runtime. The
 * moderator's `allow` lets it through, `block` blocks it with the category, and anything else —
 * no moderator, down, past its deadline, overloaded, an unparseable answer — blocks it as
 * `unavailable`. No path lets escalated input through without an `allow`.
 */
export function createModerationScreening(moderator: Moderator | undefined): ScreeningHook {
  return {
    async screen(input): Promise<ScreeningVerdict> {
      const texts = input.parts && input.parts.length > 0 ? [input.text, ...input.parts] : [input.text]
      if (!texts.some((text) => screenLocally(text).escalate)) return { allowed: true, outcome: 'passed' }
      if (!moderator) return { allowed: false, reason: 'unavailable' }
      const result = await moderator.classify(input.text, input.kind)
      switch (result.outcome) {
        case 'allow':
          return { allowed: true, outcome: 'escalated_allowed' }
        case 'block':
          return { allowed: false, reason: 'blocked', category: result.category }
        default:
          return { allowed: false, reason: 'unavailable' }
      }
    },
  }
}
