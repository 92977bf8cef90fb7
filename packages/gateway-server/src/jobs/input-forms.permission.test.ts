import { describe, expect, it } from 'vitest'
import { MAX_NOTE_LENGTH, permissionForm, permissionKey, readPermissionReply } from './input-forms.js'
import {
  accept,
  formOf,
  type PermissionView,
  permission,
  refusal,
  schemaOf,
} from './input-forms.test-helpers.js'

describe('permissionForm', () => {
  const decision = (view: PermissionView) => schemaOf(permissionForm(view)).properties.decision

  it('offers once, always and reject, naming what always approves', () => {
    expect(permissionForm(permission())).toEqual({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message:
          'The agent asks for permission (bash: rm -rf build). "Approve always" approves rm * for the whole workspace until the runtime restarts.',
        requestedSchema: {
          type: 'object',
          properties: {
            decision: {
              type: 'string',
              title: 'Decision',
              oneOf: [
                { const: 'once', title: 'Approve once' },
                { const: 'always', title: 'Approve always' },
                { const: 'reject', title: 'Reject' },
              ],
            },
            message: { type: 'string', title: 'Note to the agent (optional)', maxLength: MAX_NOTE_LENGTH },
          },
          required: ['decision'],
        },
      },
    })
  })

  it('names every always pattern, and falls back to "these patterns" without any', () => {
    expect(formOf(permissionForm(permission({ alwaysPatterns: ['rm *', 'git *'] }))).message).toContain(
      '"Approve always" approves rm *, git * for the whole workspace',
    )
    for (const alwaysPatterns of [[], undefined]) {
      const view = permission()
      if (alwaysPatterns === undefined) delete view.alwaysPatterns
      else view.alwaysPatterns = alwaysPatterns
      expect(formOf(permissionForm(view)).message).toBe(
        'The agent asks for permission (bash: rm -rf build). "Approve always" approves these patterns for the whole workspace until the runtime restarts.',
      )
    }
  })

  it('names every pattern asked, and the permission alone without patterns', () => {
    expect(formOf(permissionForm(permission({ patterns: ['a', 'b c'] }))).message).toMatch(
      /^The agent asks for permission \(bash: a, b c\)\. /,
    )
    expect(formOf(permissionForm(permission({ patterns: [] }))).message).toMatch(
      /^The agent asks for permission \(bash\)\. /,
    )
  })

  it('offers the rejection only, chosen by default, saying the credential cannot approve', () => {
    const view = permission({ allowedDecisions: ['reject'] })
    delete view.alwaysPatterns
    expect(formOf(permissionForm(view)).message).toBe(
      'The agent asks for permission (bash: rm -rf build). This credential cannot approve it; rejecting lets the agent go on without it.',
    )
    expect(decision(view)).toEqual({
      type: 'string',
      title: 'Decision',
      oneOf: [{ const: 'reject', title: 'Reject' }],
      default: 'reject',
    })
  })

  it('does not mention always when it is not offered, even with always patterns', () => {
    const view = permission({ permission: 'webfetch', patterns: [], allowedDecisions: ['once', 'reject'] })
    expect(formOf(permissionForm(view)).message).toBe('The agent asks for permission (webfetch).')
    expect(decision(view)).toEqual({
      type: 'string',
      title: 'Decision',
      oneOf: [
        { const: 'once', title: 'Approve once' },
        { const: 'reject', title: 'Reject' },
      ],
    })
  })

  it('sets no default with more than one decision', () => {
    expect(decision(permission())).not.toHaveProperty('default')
  })

  it('always offers an optional note and requires the decision only', () => {
    const schema = schemaOf(permissionForm(permission({ allowedDecisions: ['reject'] })))
    expect(schema.properties.message).toEqual({
      type: 'string',
      title: 'Note to the agent (optional)',
      maxLength: MAX_NOTE_LENGTH,
    })
    expect(schema.required).toEqual(['decision'])
  })
})

describe('readPermissionReply', () => {
  const FULL = ['once', 'always', 'reject'] as const
  const read = (entry: unknown, ask = 1) => readPermissionReply({ [permissionKey(ask)]: entry }, ask, FULL)

  it('is undefined without a form of the ask', () => {
    expect(readPermissionReply({}, 1, FULL)).toBeUndefined()
    expect(readPermissionReply({ p2: accept({ decision: 'once' }) }, 1, FULL)).toBeUndefined()
    expect(readPermissionReply({ 'q1.1': accept({ decision: 'once' }) }, 1, FULL)).toBeUndefined()
  })

  it.each([
    ['null', null],
    ['a string', 'once'],
    ['an unknown action', { action: 'approve', content: { decision: 'once' } }],
  ])('refuses an entry that is %s', (_, entry) => {
    refusal(() => read(entry))
  })

  it.each(['decline', 'cancel'])('rejects when the form is %sd, without a note', (action) => {
    expect(read({ action })).toEqual({ kind: 'permission', decision: 'reject', declined: true })
    expect(read({ action, content: { decision: 'once', message: 'ok', other: 1 } })).toEqual({
      kind: 'permission',
      decision: 'reject',
      declined: true,
    })
  })

  it.each(['once', 'always', 'reject'] as const)('reads the decision %s', (decision) => {
    expect(read(accept({ decision }))).toEqual({ kind: 'permission', decision })
  })

  it('reads the form of its own ask', () => {
    const responses = { p1: accept({ decision: 'once' }), p2: accept({ decision: 'reject' }) }
    expect(readPermissionReply(responses, 2, FULL)).toEqual({ kind: 'permission', decision: 'reject' })
  })

  it('reads the note, trimmed', () => {
    expect(read(accept({ decision: 'reject', message: '  use the build script \n' }))).toEqual({
      kind: 'permission',
      decision: 'reject',
      message: 'use the build script',
    })
    const longest = 'n'.repeat(MAX_NOTE_LENGTH)
    expect(read(accept({ decision: 'once', message: longest }))).toEqual({
      kind: 'permission',
      decision: 'once',
      message: longest,
    })
  })

  it('drops an empty or blank note', () => {
    for (const message of ['', '   ', '\n\t']) {
      const reply = read(accept({ decision: 'always', message }))
      expect(reply).toEqual({ kind: 'permission', decision: 'always' })
      expect(reply).not.toHaveProperty('message')
    }
  })

  it('refuses a note over the longest length, or one that is not text', () => {
    refusal(() => read(accept({ decision: 'reject', message: 'n'.repeat(MAX_NOTE_LENGTH + 1) })))
    for (const message of [1, null, true, ['note'], { text: 'note' }])
      refusal(() => read(accept({ decision: 'reject', message })))
  })

  it('reads an accepted form without a decision as the rejection when that is the only decision offered', () => {
    // A client that does not fill in the form's default sends no value for it.
    expect(readPermissionReply({ p1: accept({}) }, 1, ['reject'])).toEqual({
      kind: 'permission',
      decision: 'reject',
    })
    expect(readPermissionReply({ p1: accept({ message: 'why' }) }, 1, ['reject'])).toEqual({
      kind: 'permission',
      decision: 'reject',
      message: 'why',
    })
    refusal(() => readPermissionReply({ p1: accept({}) }, 1, ['once', 'reject']))
  })

  it('refuses a form without a valid decision', () => {
    refusal(() => read(accept({})))
    refusal(() => read({ action: 'accept' }))
    refusal(() => read({ action: 'accept', content: 'once' }))
    refusal(() => read(accept({ message: 'only a note' })))
    for (const decision of ['', 'Once', 'approve', 'allow', null, 1, ['once'], { once: true }])
      refusal(() => read(accept({ decision })))
  })

  it('refuses a field no form of ours has', () => {
    refusal(() => read(accept({ decision: 'once', note: 'x' })))
    refusal(() => read(accept({ decision: 'once', answer: 'Blue' })))
    refusal(() => read(accept({ decision: 'once', message: 'ok', extra: undefined })))
  })

  it.each([
    ['a sampling result', { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' }],
    ['a roots result', { roots: [{ uri: 'file:///' }] }],
  ])('refuses %s in place of a form result', (_, entry) => {
    refusal(() => read(entry))
  })
})
