// Builders and checks shared by the input-forms tests.
import { expect } from 'vitest'
import { GatewayError } from '../errors.js'
import type { Interaction } from '../schemas.js'
import { type questionForm, questionKey, readQuestionReply } from './input-forms.js'
import type { QuestionItem } from './job-status.js'

export type PermissionView = Extract<Interaction, { kind: 'permission' }>

export const item = (over: Partial<QuestionItem> = {}): QuestionItem => ({
  header: 'Colour',
  question: 'Which colour?',
  options: [
    { label: 'Blue', description: 'The sky' },
    { label: 'Red', description: 'The fire' },
  ],
  ...over,
})
export const multi = (over: Partial<QuestionItem> = {}): QuestionItem =>
  item({
    header: 'Files',
    question: 'Which files?',
    multiple: true,
    options: [
      { label: 'a.ts', description: '' },
      { label: 'b.ts', description: 'the other one' },
      { label: 'c.ts', description: '' },
    ],
    ...over,
  })
export const permission = (over: Partial<PermissionView> = {}): PermissionView => ({
  kind: 'permission',
  interaction: 'i1',
  permission: 'bash',
  patterns: ['rm -rf build'],
  allowedDecisions: ['once', 'always', 'reject'],
  alwaysPatterns: ['rm *'],
  ...over,
})

/** The params of an elicitation form request (checks that it is one). */
export const formOf = (request: ReturnType<typeof questionForm>) => {
  expect(request.method).toBe('elicitation/create')
  const params = request.params as {
    mode: string
    message: string
    requestedSchema: {
      type: string
      properties: Record<string, Record<string, unknown>>
      required?: string[]
    }
  }
  expect(params.mode).toBe('form')
  return params
}
export const schemaOf = (request: ReturnType<typeof questionForm>) => formOf(request).requestedSchema

export const accept = (content?: unknown) => ({ action: 'accept', ...(content !== undefined && { content }) })
/** Replies to ask 1, one accepted form per item content given. */
export const replies = (...contents: unknown[]): Record<string, unknown> =>
  Object.fromEntries(contents.map((c, j) => [questionKey(1, j + 1), accept(c)]))
export const readOne = (q: QuestionItem, content: unknown) => readQuestionReply([q], replies(content), 1)

/** The error `fn` throws, checked to be a gateway `invalid_input`. */
export const refusal = (fn: () => unknown): GatewayError => {
  let thrown: unknown
  try {
    fn()
  } catch (error) {
    thrown = error
  }
  expect(GatewayError.isInstance(thrown)).toBe(true)
  expect((thrown as GatewayError).code).toBe('invalid_input')
  return thrown as GatewayError
}
