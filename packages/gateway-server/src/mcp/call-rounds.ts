import { createHash } from 'node:crypto'
import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/server'
import { GatewayError } from '../errors.js'
import { type CallRounds, isRetry, type RoundNote } from '../jobs/input-rounds.js'

// The multi round-trip side of one tool call (MCP 2026-07-28), read from what the SDK lifted off
// the request: whether its client shows forms, and the state and answers a retry carries.

/** The MCP request context the SDK hands a tool callback, as far as the gateway reads it. */
export interface CallbackContext {
  mcpReq: {
    id: unknown
    signal: AbortSignal
    envelope?: Record<string, unknown>
    inputResponses?: Record<string, unknown>
    droppedInputResponseKeys?: string[]
    requestState: () => unknown
  }
}

/**
 * True when the request declares that its client shows form dialogs: a 2026-07-28 request whose
 * envelope's client capabilities have `elicitation` with `form`, or with no mode at all (which
 * means form, as the SDK and the spec read it); `url` alone is not enough.
 */
export function declaresForms(
  era: 'legacy' | 'modern',
  envelope: Record<string, unknown> | undefined,
): boolean {
  if (era !== 'modern') return false
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined
  const elicitation = caps?.elicitation
  if (typeof elicitation !== 'object' || elicitation === null || Array.isArray(elicitation)) return false
  const modes = elicitation as Record<string, unknown>
  return modes.form !== undefined || modes.url === undefined
}

/** A digest of the tool and its (parsed) arguments: a round's state is good for this call only. */
function bindingOf(name: string, input: unknown): string {
  return createHash('sha256')
    .update(name)
    .update('\u0000')
    .update(JSON.stringify(input))
    .digest('base64url')
    .slice(0, 32)
}

/**
 * The call's multi round-trip side; what happens in its rounds goes into its audit record. A
 * retry's `requestState` or answers on a tool that takes no rounds, or on a 2025-era request
 * (which has no rounds), are refused (`invalid_input`) before anything runs: such a call must
 * never be taken for a fresh one (an `agent.run` would start a second run).
 */
export function roundsOf(
  era: 'legacy' | 'modern',
  ctx: CallbackContext,
  call: { name: string; input: unknown; takesRounds: boolean },
  record: { round?: RoundNote },
): CallRounds {
  const state = ctx.mcpReq.requestState()
  const responses = ctx.mcpReq.inputResponses
  if (
    responses !== undefined &&
    (typeof responses !== 'object' || responses === null || Array.isArray(responses))
  )
    throw new GatewayError('invalid_input', 'inputResponses must map the keys of the forms to their results.')
  const retry = {
    // Anything but a string is no state of ours (the SDK refuses it before the tool runs).
    state: typeof state === 'string' ? state : undefined,
    responses,
  }
  if (isRetry(retry) && (era !== 'modern' || !call.takesRounds))
    throw new GatewayError(
      'invalid_input',
      'requestState and inputResponses belong to the retry of a waiting gateway.agent.run or gateway.job.get on MCP 2026-07-28.',
    )
  let binding: string | undefined
  return {
    forms: call.takesRounds && declaresForms(era, ctx.mcpReq.envelope),
    ...retry,
    dropped: ctx.mcpReq.droppedInputResponseKeys ?? [],
    get binding() {
      binding ??= bindingOf(call.name, call.input)
      return binding
    },
    note(round) {
      record.round = { round: 0, ...record.round, ...round }
    },
  }
}
