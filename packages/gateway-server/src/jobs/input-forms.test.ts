import { describe, expect, it } from 'vitest'
import {
  answersAny,
  MAX_ANSWER_LENGTH,
  permissionKey,
  questionForm,
  questionKey,
  readQuestionReply,
} from './input-forms.js'
import {
  accept,
  formOf,
  item,
  multi,
  readOne,
  refusal,
  replies,
  schemaOf,
} from './input-forms.test-helpers.js'

describe('questionKey and permissionKey', () => {
  it('name the form of an item of an ask, and of a permission ask, both from 1', () => {
    expect(questionKey(1, 1)).toBe('q1.1')
    expect(questionKey(3, 12)).toBe('q3.12')
    expect(permissionKey(1)).toBe('p1')
    expect(permissionKey(7)).toBe('p7')
  })
})

describe('answersAny', () => {
  it('is true when any key is answered, whatever the entry', () => {
    expect(answersAny({ 'q1.2': accept({}) }, ['q1.1', 'q1.2'])).toBe(true)
    expect(answersAny({ p1: null }, ['p1'])).toBe(true)
    expect(answersAny({ p1: undefined }, ['p1'])).toBe(true)
  })

  it('is false when no key is answered, or there are no keys', () => {
    expect(answersAny({ 'q1.1': accept({}) }, ['q2.1', 'p1'])).toBe(false)
    expect(answersAny({}, ['q1.1'])).toBe(false)
    expect(answersAny({ 'q1.1': accept({}) }, [])).toBe(false)
  })

  it('counts own keys only, not inherited ones', () => {
    const responses = Object.create({ p1: accept({ decision: 'once' }) }) as Record<string, unknown>
    expect(answersAny(responses, ['p1'])).toBe(false)
    expect(answersAny({}, ['toString', 'constructor'])).toBe(false)
  })
})

describe('questionForm', () => {
  it('asks the question text as an elicitation/create form request', () => {
    const request = questionForm(item())
    expect(request).toEqual({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: 'Which colour?',
        requestedSchema: {
          type: 'object',
          properties: {
            answer: {
              type: 'string',
              title: 'Colour',
              oneOf: [
                { const: 'Blue', title: 'Blue: The sky' },
                { const: 'Red', title: 'Red: The fire' },
              ],
            },
            custom: { type: 'string', title: 'Or type your own answer', maxLength: MAX_ANSWER_LENGTH },
          },
          required: [],
        },
      },
    })
  })

  it('titles an option without a description with its label alone', () => {
    const schema = schemaOf(
      questionForm(
        item({
          options: [
            { label: 'Yes', description: '' },
            { label: 'No', description: 'not now' },
          ],
        }),
      ),
    )
    expect(schema.properties.answer?.oneOf).toEqual([
      { const: 'Yes', title: 'Yes' },
      { const: 'No', title: 'No: not now' },
    ])
  })

  it('asks a multiple choice as an array of the options, at most one of each', () => {
    const schema = schemaOf(questionForm(multi()))
    expect(schema.properties.answer).toEqual({
      type: 'array',
      title: 'Files',
      items: {
        anyOf: [
          { const: 'a.ts', title: 'a.ts' },
          { const: 'b.ts', title: 'b.ts: the other one' },
          { const: 'c.ts', title: 'c.ts' },
        ],
      },
      maxItems: 3,
    })
    expect(schema.properties.custom).toEqual({
      type: 'string',
      title: 'Or type your own answer',
      maxLength: MAX_ANSWER_LENGTH,
    })
    expect(schema.required).toEqual([])
  })

  it('asks a question with multiple false as a single choice', () => {
    expect(schemaOf(questionForm(item({ multiple: false }))).properties.answer).toMatchObject({
      type: 'string',
      oneOf: expect.any(Array),
    })
  })

  it('offers each label once, with its first description', () => {
    const options = [
      { label: 'Blue', description: 'first' },
      { label: 'Red', description: '' },
      { label: 'Blue', description: 'second' },
      { label: 'Red', description: 'later' },
    ]
    expect(schemaOf(questionForm(item({ options }))).properties.answer?.oneOf).toEqual([
      { const: 'Blue', title: 'Blue: first' },
      { const: 'Red', title: 'Red' },
    ])
    const array = schemaOf(questionForm(item({ options, multiple: true }))).properties.answer
    expect(array).toMatchObject({
      items: {
        anyOf: [
          { const: 'Blue', title: 'Blue: first' },
          { const: 'Red', title: 'Red' },
        ],
      },
      maxItems: 2,
    })
  })

  it('offers typing with custom true as by default', () => {
    const byDefault = schemaOf(questionForm(item()))
    const explicit = schemaOf(questionForm(item({ custom: true })))
    expect(explicit).toEqual(byDefault)
    expect(Object.keys(explicit.properties)).toEqual(['answer', 'custom'])
    expect(explicit.required).toEqual([])
  })

  it('offers no typing with custom false, and then requires a choice', () => {
    const single = schemaOf(questionForm(item({ custom: false })))
    expect(Object.keys(single.properties)).toEqual(['answer'])
    expect(single.required).toEqual(['answer'])
    const many = schemaOf(questionForm(multi({ custom: false })))
    expect(Object.keys(many.properties)).toEqual(['answer'])
    expect(many.required).toEqual(['answer'])
    // A multiple choice without typing needs at least one option chosen.
    expect(many.properties.answer).toMatchObject({ minItems: 1, maxItems: 3 })
    expect(schemaOf(questionForm(multi())).properties.answer).not.toHaveProperty('minItems')
  })

  it('never offers an option with an empty label (it could not be told from no choice)', () => {
    const options = [
      { label: '', description: 'nothing' },
      { label: 'Blue', description: '' },
    ]
    expect(schemaOf(questionForm(item({ options }))).properties.answer?.oneOf).toEqual([
      { const: 'Blue', title: 'Blue' },
    ])
    refusal(() => readOne(item({ options, multiple: true }), { answer: [''] }))
  })

  it('asks a question without options as a required typed field, titled with the header', () => {
    for (const q of [item({ options: [] }), item({ options: [], multiple: true, custom: true })]) {
      expect(schemaOf(questionForm(q))).toEqual({
        type: 'object',
        properties: { custom: { type: 'string', title: 'Colour', maxLength: MAX_ANSWER_LENGTH } },
        required: ['custom'],
      })
    }
  })

  it('asks an empty form, nothing required, without options and without typing', () => {
    expect(schemaOf(questionForm(item({ options: [], custom: false })))).toEqual({
      type: 'object',
      properties: {},
      required: [],
    })
  })

  it("titles the field 'Answer' when the header is empty", () => {
    expect(schemaOf(questionForm(item({ header: '' }))).properties.answer?.title).toBe('Answer')
    expect(schemaOf(questionForm(multi({ header: '' }))).properties.answer?.title).toBe('Answer')
    expect(schemaOf(questionForm(item({ header: '', options: [] }))).properties.custom?.title).toBe('Answer')
    // Beside options, the typed field keeps its own title.
    expect(schemaOf(questionForm(item({ header: '' }))).properties.custom?.title).toBe(
      'Or type your own answer',
    )
  })

  it('keeps the question text as it is, empty included', () => {
    expect(formOf(questionForm(item({ question: '  Which one?\nPick.  ' }))).message).toBe(
      '  Which one?\nPick.  ',
    )
    expect(formOf(questionForm(item({ question: '' }))).message).toBe('')
  })
})

describe('readQuestionReply', () => {
  describe('answers', () => {
    it('reads a chosen option as its label', () => {
      expect(readOne(item(), { answer: 'Red' })).toEqual({ kind: 'answer', answers: [['Red']] })
    })

    it('reads a typed answer, trimmed', () => {
      expect(readOne(item(), { custom: '  Green, please \n' })).toEqual({
        kind: 'answer',
        answers: [['Green, please']],
      })
    })

    it('prefers the typed answer to a chosen option in a single choice', () => {
      expect(readOne(item(), { answer: 'Blue', custom: ' Teal ' })).toEqual({
        kind: 'answer',
        answers: [['Teal']],
      })
    })

    it('keeps the chosen option when the typed field is blank', () => {
      expect(readOne(item(), { answer: 'Blue', custom: '   ' })).toEqual({
        kind: 'answer',
        answers: [['Blue']],
      })
      expect(readOne(item(), { answer: 'Blue', custom: '' })).toEqual({ kind: 'answer', answers: [['Blue']] })
    })

    it('reads a multiple choice as the chosen labels, once each, in the order given, then the typed one', () => {
      expect(readOne(multi(), { answer: ['c.ts', 'a.ts', 'c.ts'] })).toEqual({
        kind: 'answer',
        answers: [['c.ts', 'a.ts']],
      })
      expect(readOne(multi(), { answer: ['b.ts'], custom: ' d.ts ' })).toEqual({
        kind: 'answer',
        answers: [['b.ts', 'd.ts']],
      })
      expect(readOne(multi(), { custom: 'none' })).toEqual({ kind: 'answer', answers: [['none']] })
      // A typed answer that repeats a chosen label is not sent twice.
      expect(readOne(multi(), { answer: ['a.ts'], custom: ' a.ts ' })).toEqual({
        kind: 'answer',
        answers: [['a.ts']],
      })
      expect(readOne(multi(), { answer: [], custom: 'none' })).toEqual({
        kind: 'answer',
        answers: [['none']],
      })
    })

    it('reads a question without options from its typed field', () => {
      expect(readOne(item({ options: [] }), { custom: 'free text' })).toEqual({
        kind: 'answer',
        answers: [['free text']],
      })
    })

    it('accepts a choice when typing is not offered', () => {
      expect(readOne(item({ custom: false }), { answer: 'Blue' })).toEqual({
        kind: 'answer',
        answers: [['Blue']],
      })
      expect(readOne(multi({ custom: false }), { answer: ['a.ts', 'b.ts'] })).toEqual({
        kind: 'answer',
        answers: [['a.ts', 'b.ts']],
      })
    })

    it('accepts a blank typed field when typing is not offered', () => {
      expect(readOne(item({ custom: false }), { answer: 'Red', custom: '  ' })).toEqual({
        kind: 'answer',
        answers: [['Red']],
      })
    })

    it('accepts a duplicated label by its first occurrence', () => {
      const q = item({
        options: [
          { label: 'Blue', description: 'first' },
          { label: 'Blue', description: 'second' },
        ],
      })
      expect(readOne(q, { answer: 'Blue' })).toEqual({ kind: 'answer', answers: [['Blue']] })
    })

    it('accepts a typed answer of exactly the longest length', () => {
      const text = 'x'.repeat(MAX_ANSWER_LENGTH)
      expect(readOne(item(), { custom: text })).toEqual({ kind: 'answer', answers: [[text]] })
    })

    it('reads every item of the ask in order', () => {
      const items = [multi(), item({ header: '', question: 'Anything else?', options: [] }), item()]
      expect(
        readQuestionReply(
          items,
          replies({ answer: ['b.ts', 'a.ts'] }, { custom: 'no' }, { answer: 'Red' }),
          1,
        ),
      ).toEqual({ kind: 'answer', answers: [['b.ts', 'a.ts'], ['no'], ['Red']] })
    })

    it('reads the forms of its own ask only', () => {
      const responses = {
        'q1.1': accept({ answer: 'Blue' }),
        'q2.1': accept({ answer: 'Red' }),
        'q2.2': { action: 'decline' },
      }
      expect(readQuestionReply([item()], responses, 1)).toEqual({ kind: 'answer', answers: [['Blue']] })
      expect(readQuestionReply([item()], responses, 2)).toEqual({ kind: 'answer', answers: [['Red']] })
      expect(readQuestionReply([item()], responses, 3)).toBeUndefined()
    })
  })

  describe('rejection', () => {
    it.each(['decline', 'cancel'])('rejects the question when a form is %sd', (action) => {
      expect(readQuestionReply([item()], { 'q1.1': { action } }, 1)).toEqual({
        kind: 'reject',
        declined: true,
      })
      expect(readQuestionReply([item()], { 'q1.1': { action, content: { answer: 'Blue' } } }, 1)).toEqual({
        kind: 'reject',
        declined: true,
      })
    })

    it('rejects the question when one item is dismissed, whatever the others say', () => {
      const items = [item(), multi(), item()]
      expect(
        readQuestionReply(
          items,
          {
            'q1.1': accept({ answer: 'Blue' }),
            'q1.2': { action: 'cancel' },
            'q1.3': accept({ answer: 'Red' }),
          },
          1,
        ),
      ).toEqual({ kind: 'reject', declined: true })
      // Also beside a missing item, or beside content that would be refused.
      expect(readQuestionReply(items, { 'q1.3': { action: 'decline' } }, 1)).toEqual({
        kind: 'reject',
        declined: true,
      })
      expect(
        readQuestionReply(
          items,
          { 'q1.1': accept({ answer: 'Purple' }), 'q1.2': { action: 'decline' }, 'q1.3': accept({}) },
          1,
        ),
      ).toEqual({ kind: 'reject', declined: true })
    })
  })

  describe('not answered (asked again)', () => {
    it('is undefined without any form of the ask', () => {
      expect(readQuestionReply([item()], {}, 1)).toBeUndefined()
      expect(readQuestionReply([item(), item()], { p1: accept({ decision: 'once' }) }, 1)).toBeUndefined()
    })

    it('is undefined when an item has no form, even if the others are answered', () => {
      expect(readQuestionReply([item(), item()], replies({ answer: 'Blue' }), 1)).toBeUndefined()
      expect(readQuestionReply([item(), item()], { 'q1.2': accept({ answer: 'Red' }) }, 1)).toBeUndefined()
    })

    it.each([
      ['an empty form', {}],
      ['an empty choice', { answer: '' }],
      ['a blank typed field', { custom: '  \t\n ' }],
      ['an empty choice and typed field', { answer: '', custom: '' }],
    ])('is undefined for %s', (_, content) => {
      expect(readOne(item(), content)).toBeUndefined()
    })

    it('is undefined for an empty multiple choice', () => {
      expect(readOne(multi(), {})).toBeUndefined()
      expect(readOne(multi(), { answer: [] })).toBeUndefined()
      expect(readOne(multi(), { answer: [], custom: ' ' })).toBeUndefined()
    })

    it('is undefined for an accepted form without content', () => {
      expect(readQuestionReply([item()], { 'q1.1': { action: 'accept' } }, 1)).toBeUndefined()
    })

    it('is undefined for the empty form of a question without options or typing', () => {
      expect(readOne(item({ options: [], custom: false }), {})).toBeUndefined()
    })

    it('is undefined when one item of several comes back empty', () => {
      expect(readQuestionReply([item(), item()], replies({ answer: 'Blue' }, {}), 1)).toBeUndefined()
    })

    it('reads accepted content that is null as an empty form (the wire allows null)', () => {
      expect(readQuestionReply([item()], { 'q1.1': { action: 'accept', content: null } }, 1)).toBeUndefined()
    })

    it.each([
      ['a string', 'Blue'],
      ['an array', ['Blue']],
      ['a number', 1],
    ])('refuses accepted content that is %s (no form result)', (_, content) => {
      refusal(() => readQuestionReply([item()], { 'q1.1': { action: 'accept', content } }, 1))
    })

    // An entry for one of our forms that matches no form result is refused, never ignored.
    it.each([
      ['null', null],
      ['undefined', undefined],
      ['a string', 'accept'],
      ['a number', 1],
      ['an array', [{ action: 'accept', content: { answer: 'Blue' } }]],
      ['an unknown action', { action: 'approve', content: { answer: 'Blue' } }],
      ['no action', { content: { answer: 'Blue' } }],
      ['a role without content', { role: 'assistant' }],
    ])('refuses an entry that is %s', (_, entry) => {
      refusal(() => readQuestionReply([item()], { 'q1.1': entry }, 1))
    })

    it('refuses a multiple choice longer than its options', () => {
      refusal(() => readOne(multi(), { answer: ['a.ts', 'a.ts', 'b.ts', 'c.ts'] }))
      refusal(() => readOne(multi(), { answer: Array.from({ length: 300 }, () => 'a.ts') }))
    })

    it('refuses an answer of more than 20 strings', () => {
      const options = Array.from({ length: 21 }, (_, i) => ({ label: `o${i}`, description: '' }))
      refusal(() => readOne(item({ options, multiple: true }), { answer: options.map((o) => o.label) }))
    })
  })

  describe('refusals (invalid_input)', () => {
    it('refuses a label that is not an option', () => {
      refusal(() => readOne(item(), { answer: 'Purple' }))
      refusal(() => readOne(item(), { answer: 'blue' }))
      refusal(() => readOne(item(), { answer: 'Blue: The sky' }))
      // Even with a typed answer, which would have won.
      refusal(() => readOne(item(), { answer: 'Purple', custom: 'Teal' }))
    })

    it('refuses a choice in a question without options', () => {
      refusal(() => readOne(item({ options: [] }), { answer: 'Blue' }))
    })

    it.each([
      ['a number', 1],
      ['a boolean', true],
      ['null', null],
      ['an array', ['Blue']],
      ['an object', { const: 'Blue' }],
    ])('refuses a single choice that is %s', (_, answer) => {
      refusal(() => readOne(item(), { answer }))
    })

    it.each([
      ['a label, not an array', 'a.ts'],
      ['an empty string', ''],
      ['null', null],
      ['an object', { 0: 'a.ts' }],
      ['an array with a non-label', ['a.ts', 'z.ts']],
      ['an array with a non-string', ['a.ts', 1]],
      ['an array with null', [null]],
      ['an array of arrays', [['a.ts']]],
    ])('refuses a multiple choice that is %s', (_, answer) => {
      refusal(() => readOne(multi(), { answer }))
    })

    it.each([
      ['a number', 42],
      ['a boolean', false],
      ['null', null],
      ['an array', ['text']],
      ['an object', { text: 'hi' }],
    ])('refuses a typed answer that is %s', (_, custom) => {
      refusal(() => readOne(item(), { custom }))
    })

    it('refuses a typed answer over the longest length', () => {
      refusal(() => readOne(item(), { custom: 'x'.repeat(MAX_ANSWER_LENGTH + 1) }))
      refusal(() => readOne(multi(), { answer: ['a.ts'], custom: 'x'.repeat(MAX_ANSWER_LENGTH + 1) }))
    })

    it('refuses a typed answer where the question takes none', () => {
      refusal(() => readOne(item({ custom: false }), { custom: 'Teal' }))
      refusal(() => readOne(item({ custom: false }), { answer: 'Blue', custom: 'Teal' }))
      refusal(() => readOne(multi({ custom: false }), { answer: ['a.ts'], custom: 'd.ts' }))
      refusal(() => readOne(item({ options: [], custom: false }), { custom: 'text' }))
    })

    it('refuses a field no form of ours has', () => {
      refusal(() => readOne(item(), { answer: 'Blue', other: 'x' }))
      refusal(() => readOne(item(), { decision: 'once' }))
      refusal(() => readOne(item(), { Answer: 'Blue' }))
      refusal(() => readOne(item(), JSON.parse('{"__proto__": {"answer": "Blue"}}')))
    })

    it.each([
      ['a sampling result', { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }],
      ['a roots result', { roots: [] }],
    ])('refuses %s in place of a form result', (_, entry) => {
      refusal(() => readQuestionReply([item()], { 'q1.1': entry }, 1))
    })

    it('refuses bad content in any item', () => {
      refusal(() => readQuestionReply([item(), item()], replies({ answer: 'Blue' }, { answer: 'Purple' }), 1))
    })
  })
})
