import { describe, expect, it } from 'vitest'
import { deriveJobState, type TurnMessage } from './derive-job-state.js'

const user = (id: string, created: number): TurnMessage => ({
  info: { id, role: 'user', time: { created } },
  parts: [{ type: 'text', text: 'hi' }],
})
const assistant = (
  parentID: string,
  opts: Partial<TurnMessage['info']> & { text?: string } = {},
): TurnMessage => ({
  info: {
    id: `a-${parentID}-${Math.random()}`,
    role: 'assistant',
    parentID,
    time: { created: 2, completed: 3 },
    finish: 'stop',
    cost: 0.001,
    tokens: { input: 10, output: 5, reasoning: 1, cache: { read: 2, write: 3 } },
    ...opts,
  },
  parts: opts.text === undefined ? [] : [{ type: 'text', text: opts.text }],
})

describe('deriveJobState', () => {
  it('is running while the session is busy with this job', () => {
    expect(
      deriveJobState({ messages: [user('m1', 1)], messageId: 'm1', session: 'busy', pendingAsks: 0 }),
    ).toEqual({ state: 'running' })
    expect(
      deriveJobState({ messages: [user('m1', 1)], messageId: 'm1', session: 'retry', pendingAsks: 0 }),
    ).toEqual({ state: 'running' })
  })

  it('needs input while this job is active and asks are pending', () => {
    expect(
      deriveJobState({ messages: [user('m1', 1)], messageId: 'm1', session: 'busy', pendingAsks: 1 }).state,
    ).toBe('input_required')
  })

  it('is running right after the prompt, before the user message is listed', () => {
    expect(deriveJobState({ messages: [], messageId: 'm1', session: 'busy', pendingAsks: 0 }).state).toBe(
      'running',
    )
  })

  it('is missing when the message is not in an idle session', () => {
    expect(deriveJobState({ messages: [], messageId: 'm1', session: 'idle', pendingAsks: 0 }).state).toBe(
      'missing',
    )
  })

  it('completes with the final text and summed usage of every step', () => {
    const messages = [
      user('m1', 1),
      assistant('m1', { finish: 'tool-calls', text: 'thinking' }),
      assistant('m1', { text: 'final answer' }),
    ]
    const state = deriveJobState({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })
    expect(state).toEqual({
      state: 'completed',
      text: 'final answer',
      usage: { cost: 0.002, input: 20, output: 10, reasoning: 2, cacheRead: 4, cacheWrite: 6 },
    })
  })

  it('an older job stays completed while a later run is busy', () => {
    const messages = [user('m1', 1), assistant('m1', { text: 'old' }), user('m2', 5)]
    expect(deriveJobState({ messages, messageId: 'm1', session: 'busy', pendingAsks: 2 })).toMatchObject({
      state: 'completed',
      text: 'old',
    })
    expect(deriveJobState({ messages, messageId: 'm2', session: 'busy', pendingAsks: 2 }).state).toBe(
      'input_required',
    )
  })

  it('is cancelled when the last step was aborted', () => {
    const messages = [
      user('m1', 1),
      assistant('m1', { error: { name: 'MessageAbortedError', data: { message: 'aborted' } }, text: 'part' }),
    ]
    expect(deriveJobState({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })).toMatchObject({
      state: 'cancelled',
      text: 'part',
    })
  })

  it('is running when the session is still idle moments after the prompt', () => {
    expect(
      deriveJobState({
        messages: [user('m1', 1)],
        messageId: 'm1',
        session: 'idle',
        pendingAsks: 0,
        justPrompted: true,
      }).state,
    ).toBe('running')
  })

  it('is cancelled when an aborted run left no answer at all', () => {
    expect(
      deriveJobState({ messages: [user('m1', 1)], messageId: 'm1', session: 'idle', pendingAsks: 0 }).state,
    ).toBe('cancelled')
  })

  it('fails with the runtime error, its message truncated', () => {
    const messages = [
      user('m1', 1),
      assistant('m1', { error: { name: 'APIError', data: { message: 'x'.repeat(900) } } }),
    ]
    const state = deriveJobState({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })
    expect(state.state).toBe('failed')
    if (state.state === 'failed') {
      expect(state.error.name).toBe('APIError')
      expect(state.error.message.length).toBe(500)
    }
  })

  it('rewrites the final text and the error with redact, and cuts the message after rewriting', () => {
    const long = 'x'.repeat(495)
    const messages = [
      user('m1', 1),
      assistant('m1', {
        text: 'answer from /host/secret',
        error: { name: 'APIError /host', data: { message: `${long} /host/secret/path` } },
      }),
    ]
    const redact = (text: string) => text.replaceAll(/\/host(\/secret(\/path)?)?/g, '[h]')
    const state = deriveJobState({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0, redact })
    // Cut before rewriting, the message would end in a fragment of the path (`…/host/se…`).
    expect(state).toMatchObject({
      state: 'failed',
      text: 'answer from [h]',
      error: { name: 'APIError [h]', message: `${long} [h]` },
    })
    const done = deriveJobState({
      messages: [user('m2', 1), assistant('m2', { text: '/host/secret/path' })],
      messageId: 'm2',
      session: 'idle',
      pendingAsks: 0,
      redact,
    })
    expect(done).toMatchObject({ state: 'completed', text: '[h]' })
  })

  it('fails when the process died mid-turn (no completion, no error)', () => {
    const messages = [user('m1', 1), assistant('m1', { time: { created: 2 }, finish: undefined })]
    expect(deriveJobState({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })).toMatchObject({
      state: 'failed',
      error: { name: 'Interrupted' },
    })
  })

  it('ignores synthetic text parts in the final text', () => {
    const m = assistant('m1')
    const withParts = {
      ...m,
      parts: [
        { type: 'text', text: 'visible' },
        { type: 'text', text: ' hidden', synthetic: true },
      ],
    }
    expect(
      deriveJobState({
        messages: [user('m1', 1), withParts],
        messageId: 'm1',
        session: 'idle',
        pendingAsks: 0,
      }),
    ).toMatchObject({
      text: 'visible',
    })
  })
})
