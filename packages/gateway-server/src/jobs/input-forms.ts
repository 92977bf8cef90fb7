import { type InputRequest, inputRequired, inputResponse } from '@modelcontextprotocol/server'
import { GatewayError } from '../errors.js'
import { type Interaction, MAX_ANSWER_LENGTH, MAX_NOTE_LENGTH } from '../schemas.js'
import type { QuestionItem } from './job-status.js'

// The forms of a multi round-trip round (MCP 2026-07-28 `input_required` with embedded
// `elicitation/create` requests) and the reading of the answers a retry brings back. Pure: what
// the forms show is the redacted view clients already get from `gateway.job.get`, and answers
// are checked against that same view.

type PermissionView = Extract<Interaction, { kind: 'permission' }>
type Decision = PermissionView['allowedDecisions'][number]

/** Longest typed answer and permission note: the bounds of `gateway.interaction.respond`. */
export { MAX_ANSWER_LENGTH, MAX_NOTE_LENGTH }

/** Most strings in one item's answer (the bound of `gateway.interaction.respond`). */
const MAX_ANSWERS = 20

/** Key of the form for item `item` of the round's ask `ask` (both from 1). */
export const questionKey = (ask: number, item: number): string => `q${ask}.${item}`
/** Key of the form for the round's ask `ask` (from 1), a permission request. */
export const permissionKey = (ask: number): string => `p${ask}`

/**
 * What the answers to one ask came to (`declined`: the dialog was declined or cancelled);
 * `undefined` from a reader: not answered (ask again).
 */
export type AskReply =
  | { kind: 'answer'; answers: string[][] }
  | { kind: 'reject'; declined: true }
  | { kind: 'permission'; decision: Decision; message?: string; declined?: true }

const DECISION_TITLES: Readonly<Record<Decision, string>> = {
  once: 'Approve once',
  always: 'Approve always',
  reject: 'Reject',
}

const invalid = (message: string): GatewayError => new GatewayError('invalid_input', message)

type FormSchema = Parameters<typeof inputRequired.elicit>[0]['requestedSchema']

/** The options of an item that can be chosen: each label once (the first description wins), none empty. */
function options(item: QuestionItem): QuestionItem['options'] {
  const seen = new Set<string>()
  return item.options.filter((o) => o.label !== '' && !seen.has(o.label) && seen.add(o.label))
}

/** True when a form can answer the item: it has an option to choose, or takes a typed answer. */
export function answerable(item: QuestionItem): boolean {
  return item.custom !== false || options(item).length > 0
}

/**
 * The form of one question item: its text as the message, its options as a single or multiple
 * choice (each titled with its description), and a free-text field where the question allows a
 * typed answer.
 */
export function questionForm(item: QuestionItem): InputRequest {
  const choices = options(item).map((o) => ({
    const: o.label,
    title: o.description === '' ? o.label : `${o.label}: ${o.description}`,
  }))
  const title = item.header === '' ? 'Answer' : item.header
  const properties: Record<string, unknown> = {}
  if (choices.length > 0) {
    properties.answer =
      item.multiple === true
        ? {
            type: 'array',
            title,
            items: { anyOf: choices },
            // Without a typed answer, at least one option is the answer.
            ...(item.custom === false && { minItems: 1 }),
            maxItems: choices.length,
          }
        : { type: 'string', title, oneOf: choices }
  }
  const typed = item.custom !== false
  if (typed) {
    properties.custom = {
      type: 'string',
      title: choices.length > 0 ? 'Or type your own answer' : title,
      maxLength: MAX_ANSWER_LENGTH,
    }
  }
  const required = choices.length > 0 ? (typed ? [] : ['answer']) : typed ? ['custom'] : []
  return inputRequired.elicit({
    message: item.question,
    requestedSchema: { type: 'object', properties, required } as FormSchema,
  })
}

/**
 * The form of a permission request: what is asked, a choice among the decisions this credential
 * may send (only `reject` without the full policy), and an optional note to the agent.
 */
export function permissionForm(view: PermissionView): InputRequest {
  const decisions = view.allowedDecisions
  const asked = view.patterns.length > 0 ? `${view.permission}: ${view.patterns.join(', ')}` : view.permission
  const lines = [`The agent asks for permission (${asked}).`]
  if (decisions.includes('always'))
    lines.push(
      `"Approve always" approves ${view.alwaysPatterns?.join(', ') || 'these patterns'} for the whole workspace until the runtime restarts.`,
    )
  if (!decisions.includes('once'))
    lines.push('This credential cannot approve it; rejecting lets the agent go on without it.')
  return inputRequired.elicit({
    message: lines.join(' '),
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          oneOf: decisions.map((d) => ({ const: d, title: DECISION_TITLES[d] })),
          ...(decisions.length === 1 && { default: decisions[0] }),
        },
        message: { type: 'string', title: 'Note to the agent (optional)', maxLength: MAX_NOTE_LENGTH },
      },
      required: ['decision'],
    } as FormSchema,
  })
}

/** The accepted content of a form, `'declined'` (declined or cancelled), or `undefined` (no answer). */
function formAnswer(
  responses: Record<string, unknown>,
  key: string,
): Record<string, unknown> | 'declined' | undefined {
  if (!Object.hasOwn(responses, key)) return undefined
  // An entry for one of our forms that is not a form's result is refused, never ignored.
  const view = inputResponse(responses, key)
  if (view.kind !== 'elicit') throw invalid(`The answer to ${key} is not a form result.`)
  if (view.action !== 'accept') return 'declined'
  const content = (responses[key] as { content?: unknown }).content
  if (content !== undefined && content !== null && (typeof content !== 'object' || Array.isArray(content)))
    throw invalid(`The answer to ${key} is not a form result.`)
  return view.content ?? {}
}

function onlyKeys(content: Record<string, unknown>, allowed: readonly string[], key: string): void {
  for (const field of Object.keys(content))
    if (!allowed.includes(field)) throw invalid(`The answer to ${key} has an unknown field.`)
}

/** A typed answer: trimmed, `undefined` when empty; refused when too long or not a string. */
function typedText(value: unknown, max: number, key: string): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.length > max)
    throw invalid(`The text of ${key} is too long or not text.`)
  const text = value.trim()
  return text === '' ? undefined : text
}

/** One item's answer strings, or `undefined` when the form was submitted empty. */
function itemAnswer(item: QuestionItem, content: Record<string, unknown>, key: string): string[] | undefined {
  onlyKeys(content, ['answer', 'custom'], key)
  const labels = new Set(options(item).map((o) => o.label))
  let chosen: string[] = []
  const answer = content.answer
  if (item.multiple === true && answer !== undefined) {
    if (
      !Array.isArray(answer) ||
      answer.length > labels.size ||
      answer.some((a) => typeof a !== 'string' || !labels.has(a))
    )
      throw invalid(`The answer to ${key} is not among its options.`)
    chosen = [...new Set(answer as string[])]
  } else if (answer !== undefined && answer !== '') {
    if (typeof answer !== 'string' || !labels.has(answer))
      throw invalid(`The answer to ${key} is not one of its options.`)
    chosen = [answer]
  }
  const custom = typedText(content.custom, MAX_ANSWER_LENGTH, key)
  if (custom !== undefined && item.custom === false)
    throw invalid(`The question of ${key} does not take a typed answer.`)
  // A typed answer that repeats a chosen option is that option once.
  const extra = custom === undefined || chosen.includes(custom) ? [] : [custom]
  const answers = item.multiple === true ? [...chosen, ...extra] : custom ? [custom] : chosen
  if (answers.length > MAX_ANSWERS) throw invalid(`The answer to ${key} has more than ${MAX_ANSWERS} parts.`)
  return answers.length > 0 ? answers : undefined
}

/**
 * Reads the forms of one question (ask number `ask`, one form per item). A declined or cancelled
 * form rejects the question; a missing or empty one leaves it pending (asked again); content
 * that no form of ours could produce is refused (`invalid_input`).
 */
export function readQuestionReply(
  items: readonly QuestionItem[],
  responses: Record<string, unknown>,
  ask: number,
): AskReply | undefined {
  const forms = items.map((_, j) => formAnswer(responses, questionKey(ask, j + 1)))
  if (forms.includes('declined')) return { kind: 'reject', declined: true }
  const answers: string[][] = []
  for (const [j, form] of forms.entries()) {
    if (form === undefined || form === 'declined') return undefined
    const answer = itemAnswer(items[j] as QuestionItem, form, questionKey(ask, j + 1))
    if (answer === undefined) return undefined
    answers.push(answer)
  }
  return { kind: 'answer', answers }
}

/**
 * Reads the form of one permission request (ask number `ask`): the decision chosen and the note,
 * or `reject` when the form was declined or cancelled, or accepted without a decision where
 * rejecting is the only one `offered` (a client that does not fill in the form's default). Whether
 * the decision is allowed is the caller's check (it depends on the policy and on the runtime's
 * permission name).
 */
export function readPermissionReply(
  responses: Record<string, unknown>,
  ask: number,
  offered: readonly Decision[],
): Extract<AskReply, { kind: 'permission' }> | undefined {
  const key = permissionKey(ask)
  const form = formAnswer(responses, key)
  if (form === undefined) return undefined
  if (form === 'declined') return { kind: 'permission', decision: 'reject', declined: true }
  onlyKeys(form, ['decision', 'message'], key)
  const decision = form.decision ?? (offered.length === 1 && offered[0] === 'reject' ? 'reject' : undefined)
  if (decision !== 'once' && decision !== 'always' && decision !== 'reject')
    throw invalid(`The answer to ${key} needs a decision: once, always or reject.`)
  const message = typedText(form.message, MAX_NOTE_LENGTH, key)
  return { kind: 'permission', decision, ...(message !== undefined && { message }) }
}

/** True when the retry carries an answer to any form of the ask. */
export function answersAny(responses: Record<string, unknown>, keys: readonly string[]): boolean {
  return keys.some((key) => Object.hasOwn(responses, key))
}
