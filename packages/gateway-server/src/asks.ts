import { isDecisionAllowed, type Policy } from '@sallyport/policy'
import { GatewayError } from './errors.js'
import type { Principal } from './principal.js'
import { type ScreeningHook, type ScreeningRecord, screenOrThrow } from './screening.js'

// What answering an agent's question or permission request means, whichever way the answer
// comes (`gateway.interaction.respond`, or the forms of an input_required round): the decisions
// a policy may send, and the screening of everything that reaches the runtime.

/**
 * Refuses a decision the policy may not send for this ask (`forbidden`): approval without the
 * `full` policy, or "always" for a webfetch ask, which OpenCode asks with `always: ["*"]` (every
 * URL, whole project, until restart). `permission` is the runtime's name, once it is known.
 */
export function assertDecisionAllowed(policy: Policy, decision: string, permission?: string): void {
  if (isDecisionAllowed(policy, decision, permission)) return
  throw isDecisionAllowed(policy, decision)
    ? new GatewayError('forbidden', 'A web fetch request can be approved once or rejected, never always.')
    : new GatewayError('forbidden', 'This credential may reject permission requests but not approve them.')
}

/** Screens a question's answers (each string on its own, and all together) before they are sent. */
export function screenAnswers(
  screening: ScreeningHook,
  principal: Principal,
  answers: readonly (readonly string[])[],
  record?: (screened: ScreeningRecord) => void,
): Promise<void> {
  const parts = answers.flat()
  return screenOrThrow(screening, { kind: 'answer', text: parts.join('\n'), parts, principal }, record)
}

/** Screens the note sent with a permission decision before it is sent. */
export function screenNote(
  screening: ScreeningHook,
  principal: Principal,
  note: string,
  record?: (screened: ScreeningRecord) => void,
): Promise<void> {
  return screenOrThrow(screening, { kind: 'permission_message', text: note, principal }, record)
}
