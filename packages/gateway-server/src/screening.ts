import { GatewayError } from './errors.js'
import type { Principal } from './principal.js'

/** What is screened before it reaches the assistant runtime. */
export interface ScreeningInput {
  kind: 'message' | 'answer' | 'permission_message'
  /** The whole input as the runtime would receive it. */
  text: string
  /** Its separate strings (each answer of a question reply), each screened locally too. */
  parts?: readonly string[]
  principal: Principal
}

/**
 * How screening went, for the audit log (never the text): `passed` the local screen let it
 * through; `escalated_allowed` the moderator allowed it; `blocked` the moderator blocked it;
 * `unavailable` it was escalated and the moderator could not decide (blocked too).
 */
export type ScreeningOutcome = 'passed' | 'escalated_allowed' | 'blocked' | 'unavailable'

export type ScreeningVerdict =
  | { allowed: true; outcome?: 'passed' | 'escalated_allowed' }
  | { allowed: false; reason: 'blocked'; category?: string }
  | { allowed: false; reason: 'unavailable' }

/** One screening as the audit log records it. */
export interface ScreeningRecord {
  outcome: ScreeningOutcome
  ms: number
  category?: string
}

/**
 * The screening seam: messages, question answers and permission messages pass through it before
 * they reach the assistant runtime. A hook that cannot decide must answer `unavailable`, and
 * the gateway then blocks the input (fail closed).
 */
export interface ScreeningHook {
  screen(input: ScreeningInput): Promise<ScreeningVerdict>
}

/**
 * Screens one input; throws `blocked_by_moderation` (naming the category), or
 * `moderator_unavailable` when the hook says so or fails (fail closed: unscreened input never
 * reaches the runtime). `record` receives the outcome and its latency for the audit log.
 */
export async function screenOrThrow(
  screening: ScreeningHook,
  input: ScreeningInput,
  record?: (screened: ScreeningRecord) => void,
): Promise<void> {
  const started = performance.now()
  const verdict = await screening
    .screen(input)
    .catch((): ScreeningVerdict => ({ allowed: false, reason: 'unavailable' }))
  const ms = Math.round(performance.now() - started)
  if (verdict.allowed) {
    record?.({ outcome: verdict.outcome ?? 'passed', ms })
    return
  }
  if (verdict.reason === 'unavailable') {
    record?.({ outcome: 'unavailable', ms })
    throw new GatewayError(
      'moderator_unavailable',
      'The input looked suspicious and could not be checked by the moderator right now, so it was not sent.',
    )
  }
  const category = verdict.category ?? 'other'
  record?.({ outcome: 'blocked', ms, category })
  throw new GatewayError(
    'blocked_by_moderation',
    `The input was blocked by moderation (category: ${category}).`,
    {
      details: { category },
    },
  )
}
