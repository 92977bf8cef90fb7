import { describe, expect, it } from 'vitest'
import { DEAD_AFTER_MS, type DeriveInput, deriveJobState, type TurnMessage } from './derive-job-state.js'

/** Long after the start unless the test says otherwise (no start-up grace applies). */
const derive = (input: Omit<DeriveInput, 'now' | 'startedAt'> & Partial<DeriveInput>) =>
  deriveJobState({ now: 1_000_000, startedAt: 0, ...input })

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
    expect(derive({ messages: [user('m1', 1)], messageId: 'm1', session: 'busy', pendingAsks: 0 })).toEqual({
      state: 'running',
    })
    expect(derive({ messages: [user('m1', 1)], messageId: 'm1', session: 'retry', pendingAsks: 0 })).toEqual({
      state: 'running',
    })
  })

  it('needs input while this job is active and asks are pending', () => {
    expect(
      derive({ messages: [user('m1', 1)], messageId: 'm1', session: 'busy', pendingAsks: 1 }).state,
    ).toBe('input_required')
  })

  it('is running right after the prompt, before the user message is listed', () => {
    expect(derive({ messages: [], messageId: 'm1', session: 'busy', pendingAsks: 0 }).state).toBe('running')
  })

  it('is missing when the message is not in an idle session', () => {
    expect(derive({ messages: [], messageId: 'm1', session: 'idle', pendingAsks: 0 }).state).toBe('missing')
  })

  it('completes with the final text and summed usage of every step', () => {
    const messages = [
      user('m1', 1),
      assistant('m1', { finish: 'tool-calls', text: 'thinking' }),
      assistant('m1', { text: 'final answer' }),
    ]
    const state = derive({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })
    expect(state).toEqual({
      state: 'completed',
      text: 'final answer',
      usage: { cost: 0.002, input: 20, output: 10, reasoning: 2, cacheRead: 4, cacheWrite: 6 },
    })
  })

  it('an older job stays completed while a later run is busy', () => {
    const messages = [user('m1', 1), assistant('m1', { text: 'old' }), user('m2', 5)]
    expect(derive({ messages, messageId: 'm1', session: 'busy', pendingAsks: 2 })).toMatchObject({
      state: 'completed',
      text: 'old',
    })
    expect(derive({ messages, messageId: 'm2', session: 'busy', pendingAsks: 2 }).state).toBe(
      'input_required',
    )
  })

  it('is cancelled when the last step was aborted', () => {
    const messages = [
      user('m1', 1),
      assistant('m1', { error: { name: 'MessageAbortedError', data: { message: 'aborted' } }, text: 'part' }),
    ]
    expect(derive({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })).toMatchObject({
      state: 'cancelled',
      text: 'part',
    })
  })

  it('is running when the session is still idle moments after the prompt', () => {
    expect(
      derive({
        messages: [user('m1', 1)],
        messageId: 'm1',
        session: 'idle',
        pendingAsks: 0,
        now: 5_000,
        startedAt: 0,
      }).state,
    ).toBe('running')
  })

  it('is cancelled when an aborted run left no answer at all', () => {
    expect(
      derive({ messages: [user('m1', 1)], messageId: 'm1', session: 'idle', pendingAsks: 0 }).state,
    ).toBe('cancelled')
  })

  it('fails with the runtime error, its message truncated', () => {
    const messages = [
      user('m1', 1),
      assistant('m1', { error: { name: 'APIError', data: { message: 'x'.repeat(900) } } }),
    ]
    const state = derive({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })
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
    const state = derive({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0, redact })
    // Cut before rewriting, the message would end in a fragment of the path (`…/host/se…`).
    expect(state).toMatchObject({
      state: 'failed',
      text: 'answer from [h]',
      error: { name: 'APIError [h]', message: `${long} [h]` },
    })
    const done = derive({
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
    expect(derive({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 })).toMatchObject({
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
      derive({
        messages: [user('m1', 1), withParts],
        messageId: 'm1',
        session: 'idle',
        pendingAsks: 0,
      }),
    ).toMatchObject({
      text: 'visible',
    })
  })

  it('reads an abort during retry back-off (completed, no finish, no parts) as cancelled', () => {
    const messages = [user('m1', 1), assistant('m1', { finish: undefined })]
    expect(derive({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0 }).state).toBe('cancelled')
  })

  it('a tool step is followed by another step: idle after it is not an end (until the bound)', () => {
    const failedCall = (error: string): TurnMessage => ({
      ...assistant('m1', { finish: 'tool-calls' }),
      parts: [{ type: 'tool', state: { status: 'error', error } }],
    })
    const generic = [user('m1', 1), failedCall('ENOENT: no such file')]
    expect(
      derive({ messages: generic, messageId: 'm1', session: 'idle', pendingAsks: 0, now: 30_000 }).state,
    ).toBe('running')
    // A refused call (permission rejected without feedback, question dismissed) ends the turn.
    for (const refusal of [
      'The user rejected permission to use this specific tool call.',
      'The user dismissed this question',
    ]) {
      const refused = [user('m1', 1), failedCall(refusal)]
      expect(
        derive({ messages: refused, messageId: 'm1', session: 'idle', pendingAsks: 0, now: 30_000 }),
      ).toMatchObject({
        state: 'completed',
        inferred: true,
      })
    }
  })

  it('an unfinished answer in an idle session is running for the bound, then Interrupted', () => {
    const messages = [user('m1', 1), assistant('m1', { time: { created: 2 }, finish: undefined })]
    const at = (now: number) => derive({ messages, messageId: 'm1', session: 'idle', pendingAsks: 0, now })
    expect(at(2 + DEAD_AFTER_MS - 1).state).toBe('running')
    expect(at(2 + DEAD_AFTER_MS)).toMatchObject({
      state: 'failed',
      error: { name: 'Interrupted' },
      inferred: true,
    })
  })

  it("this gateway's cancel reads cancelled at once, unless the runtime recorded another end", () => {
    const started = [user('m1', 1)]
    expect(
      derive({
        messages: started,
        messageId: 'm1',
        session: 'busy',
        pendingAsks: 0,
        cancelledByGateway: true,
      }),
    ).toMatchObject({ state: 'cancelled' })
    const done = [user('m1', 1), assistant('m1', { text: 'finished first' })]
    expect(
      derive({ messages: done, messageId: 'm1', session: 'idle', pendingAsks: 0, cancelledByGateway: true }),
    ).toMatchObject({ state: 'completed', text: 'finished first' })
  })

  it('a later run that has begun ends an older run with no record of its end', () => {
    const messages = [
      user('m1', 1),
      assistant('m1', { time: { created: 2 }, finish: undefined }),
      user('m2', 5),
      assistant('m2', { time: { created: 6 }, finish: undefined }),
    ]
    expect(derive({ messages, messageId: 'm1', session: 'busy', pendingAsks: 0, now: 10 })).toMatchObject({
      state: 'failed',
      error: { name: 'Interrupted' },
    })
  })

  it('messages the runtime adds to a run (compaction, its synthetic continue) belong to it', () => {
    const compaction: TurnMessage = {
      info: { id: 'c1', role: 'user', time: { created: 3 } },
      parts: [{ type: 'compaction' }],
    }
    const resume: TurnMessage = {
      info: { id: 'c2', role: 'user', time: { created: 5 } },
      parts: [{ type: 'text', text: 'Continue if you have next steps', synthetic: true }],
    }
    const messages = [
      user('m1', 1),
      assistant('m1', { finish: 'tool-calls' }),
      compaction,
      assistant('c1', { text: 'summary' }),
      resume,
      assistant('c2', { time: { created: 6 }, finish: undefined }),
    ]
    expect(derive({ messages, messageId: 'm1', session: 'busy', pendingAsks: 0 }).state).toBe('running')
    const done = [...messages.slice(0, 5), assistant('c2', { text: 'really done' })]
    expect(derive({ messages: done, messageId: 'm1', session: 'idle', pendingAsks: 0 })).toMatchObject({
      state: 'completed',
      text: 'really done',
    })
  })
})
