import { assertDecisionAllowed, screenAnswers, screenNote } from '../asks.js'
import { GatewayError } from '../errors.js'
import type { ToolDefinition } from '../mcp/define-tool.js'
import type { Principal } from '../principal.js'
import type { RuntimePort } from '../runtime/port.js'
import { InteractionRespond, InteractionRespondInput } from '../schemas.js'
import type { ScreeningHook } from '../screening.js'
import type { OwnedSessions } from '../sessions/owned.js'

export interface InteractionToolContext {
  principal: Principal
  runtime: RuntimePort
  owned: OwnedSessions
  screening: ScreeningHook
}

// Also what a reply that comes back `absent` means: the request was answered or dismissed in the
// meantime (the runtime answers 404).
const notPending = (): GatewayError =>
  new GatewayError('not_pending', 'That question or permission request is no longer pending.')

/**
 * `gateway.interaction.respond`: answers a pending question or permission request of an owned
 * session. The request must still be pending AND belong to the session the handle was issued
 * for; approval (once/always) needs the `full` policy; text sent on is screened first.
 */
export function interactionRespondTool(
  ctx: InteractionToolContext,
): ToolDefinition<typeof InteractionRespondInput, typeof InteractionRespond> {
  const { runtime, owned, principal } = ctx
  return {
    title: 'Answer the agent',
    description:
      'Answer a pending question (answers: one array of option labels or custom text per question, or decision "reject" to dismiss it) or a permission request (decision once, always or reject, with an optional message). Only the full policy may approve (once/always), and only with a decision its allowedDecisions list. "always" approves the alwaysPatterns of the request (the runtime patterns, wider than the command asked about) for the whole workspace until the runtime restarts; a web fetch request (permission webfetch) can never be approved "always", since that would approve every URL.',
    input: InteractionRespondInput,
    output: InteractionRespond,
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: async ({ interaction, decision, answers, message }, _signal, call) => {
      const ref = await owned.openInteraction(interaction)
      if (ref.kind === 'permission') {
        if (decision === undefined)
          throw new GatewayError(
            'invalid_input',
            'A permission request needs a decision: once, always or reject.',
          )
        if (answers !== undefined)
          throw new GatewayError('invalid_input', 'answers are for questions, not permission requests.')
        // Before any runtime call: a decision no ask of this policy allows.
        assertDecisionAllowed(principal.policy, decision)
        const pending = await runtime.permissions(ref.session.id)
        const ask = pending.find((p) => p.id === ref.requestId && p.sessionID === ref.session.id)
        if (!ask) throw notPending()
        // And for this ask: the decisions offered in its allowedDecisions, no others.
        assertDecisionAllowed(principal.policy, decision, ask.permission)
        if (message !== undefined) await screenNote(ctx.screening, principal, message, call.screened)
        if ((await runtime.replyPermission(ref.requestId, decision, message)) === 'absent') throw notPending()
        return { accepted: true as const, kind: 'permission' as const }
      }
      if (message !== undefined)
        throw new GatewayError(
          'invalid_input',
          'message is for permission requests; answer a question with answers.',
        )
      const pending = await runtime.questions(ref.session.id)
      const question = pending.find((q) => q.id === ref.requestId && q.sessionID === ref.session.id)
      if (!question) throw notPending()
      if (decision === 'reject' && answers === undefined) {
        if ((await runtime.rejectQuestion(ref.requestId)) === 'absent') throw notPending()
        return { accepted: true as const, kind: 'question' as const }
      }
      if (decision !== undefined || answers === undefined) {
        throw new GatewayError(
          'invalid_input',
          'Answer a question with answers (or decision "reject" alone to dismiss it).',
        )
      }
      if (answers.length !== question.questions.length) {
        throw new GatewayError(
          'invalid_input',
          `Give one answer array per question (${question.questions.length}).`,
        )
      }
      await screenAnswers(ctx.screening, principal, answers, call.screened)
      if ((await runtime.replyQuestion(ref.requestId, answers)) === 'absent') throw notPending()
      return { accepted: true as const, kind: 'question' as const }
    },
  }
}
