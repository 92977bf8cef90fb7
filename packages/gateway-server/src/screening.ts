import { GatewayError } from './errors.js'
import type { Principal } from './principal.js'

/** What is screened before it reaches the assistant runtime. */
export interface ScreeningInput {
  kind: 'message' | 'answer' | 'permission_message'
  text: string
  principal: Principal
}

export type ScreeningVerdict = { allowed: true } | { allowed: false; reason: 'blocked' | 'unavailable' }

/**
 * The screening seam: messages, question answers and permission messages pass through it before
 * they reach the assistant runtime. A hook that cannot decide must answer `unavailable`, and
 * the gateway then blocks the input (fail closed).
 */
export interface ScreeningHook {
  screen(input: ScreeningInput): Promise<ScreeningVerdict>
}

/** Lets everything through. The default until a moderator is configured. */
export const passThroughScreening: ScreeningHook = {
  screen: async () => ({ allowed: true }),
}

/**
 * Screens one input; throws `blocked_by_moderation`, or `moderator_unavailable` when the hook
 * says so or fails (fail closed: unscreened input never reaches the runtime).
 */
export async function screenOrThrow(screening: ScreeningHook, input: ScreeningInput): Promise<void> {
  const verdict = await screening
    .screen(input)
    .catch((): ScreeningVerdict => ({ allowed: false, reason: 'unavailable' }))
  if (verdict.allowed) return
  throw verdict.reason === 'unavailable'
    ? new GatewayError(
        'moderator_unavailable',
        'The input could not be screened right now, so it was not sent.',
      )
    : new GatewayError('blocked_by_moderation', 'The input was blocked by moderation.')
}
