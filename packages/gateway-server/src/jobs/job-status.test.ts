import { describe, expect, it } from 'vitest'
import { createRedactor } from '../redact.js'
import type { RuntimePort, RuntimeSession, RuntimeStatus } from '../runtime/port.js'
import type { OwnedSessions } from '../sessions/owned.js'
import type { TurnMessage } from './derive-job-state.js'
import { type JobContext, jobStatus } from './job-status.js'

// Issue 10, finding 1: messages and status were read at the same time, and "idle + unfinished
// answer" from two different moments was reported as a dead run (`failed`, Interrupted) for runs
// that were still going or had just completed. The reads below replay those moments in order.

const SESSION = { id: 'ses_1', time: { created: 1, updated: 1 } } as unknown as RuntimeSession
const user: TurnMessage = { info: { id: 'msg_user', role: 'user', time: { created: 1 } }, parts: [] }
const answer = (completed: boolean): TurnMessage => ({
  info: {
    id: 'msg_answer',
    role: 'assistant',
    parentID: 'msg_user',
    time: { created: 2, ...(completed && { completed: 3 }) },
  },
  parts: [{ type: 'text', text: completed ? 'all done' : 'working' }],
})

/** A runtime whose successive reads return the given answers, in order (the last one repeats). */
function runtime(messages: TurnMessage[][], statuses: RuntimeStatus[]) {
  const calls: string[] = []
  const next = <T>(list: T[]): T => (list.length > 1 ? (list.shift() as T) : (list[0] as T))
  const port = {
    messages: async () => {
      calls.push('messages')
      return next(messages)
    },
    statusOf: async () => {
      calls.push('status')
      return next(statuses)
    },
    permissions: async () => [],
    questions: async () => [],
    messageDiff: async () => [],
    todos: async () => [],
  } as unknown as RuntimePort
  return { port, calls }
}

function context(port: RuntimePort): JobContext {
  const owned = {
    sealSession: async () => 'v1.session',
    sealJob: async () => 'v1.job',
    sealInteraction: async () => 'v1.interaction',
  } as unknown as OwnedSessions
  return {
    principal: { policy: 'full' } as JobContext['principal'],
    runtime: port,
    owned,
    redactor: createRedactor(),
    // Long after the start: no start-up grace applies.
    now: () => 1_000_000,
  }
}

const job = { messageId: 'msg_user', startedAt: 0 }

describe('jobStatus never reports a live run as interrupted', () => {
  it('an unfinished answer read just before the turn completed, with the idle status after: completed', async () => {
    const { port, calls } = runtime(
      [
        [user, answer(false)],
        [user, answer(true)],
      ],
      ['idle'],
    )
    const status = await jobStatus(context(port), SESSION, job)
    expect(status).toMatchObject({ status: 'completed', text: 'all done' })
    // The confirming reads come in order: status after the messages, messages after the status.
    expect(calls).toEqual(['messages', 'status', 'status', 'messages'])
  })

  it('an idle status read before the run was marked busy: running', async () => {
    const { port } = runtime([[user, answer(false)]], ['idle', 'busy'])
    expect(await jobStatus(context(port), SESSION, job)).toMatchObject({ status: 'running' })
  })

  it('a turn really left unfinished by a killed process stays failed (Interrupted)', async () => {
    const { port, calls } = runtime([[user, answer(false)]], ['idle'])
    expect(await jobStatus(context(port), SESSION, job)).toMatchObject({
      status: 'failed',
      error: { name: 'Interrupted' },
    })
    expect(calls.length).toBeLessThanOrEqual(6) // two confirming rounds at most
  })

  it('a completed run costs no extra read', async () => {
    const { port, calls } = runtime([[user, answer(true)]], ['idle'])
    expect(await jobStatus(context(port), SESSION, job)).toMatchObject({ status: 'completed' })
    expect(calls).toEqual(['messages', 'status'])
  })
})
