import { UpstreamError } from '@sallyport/upstream-client'
import { describe, expect, it } from 'vitest'
import { createRedactor } from '../redact.js'
import type { RuntimePort, RuntimeSession, RuntimeStatus } from '../runtime/port.js'
import { DEAD_AFTER_MS, type TurnMessage } from './derive-job-state.js'
import { type JobContext, jobStatus, keepCancelled, retryState, waitForJob } from './job-status.js'
import { jobContext } from './test-context.js'

const context = (port: RuntimePort, now = 1_000_000): JobContext => jobContext(port, () => now)

// Issue 10, finding 1: messages and status were read at the same time, and "idle + unfinished
// answer" from two different moments was reported as a dead run (`failed`, Interrupted) for runs
// that were still going or had just completed. The reads below replay those moments in order.

const SESSION = { id: 'ses_1', time: { created: 1, updated: 1 } } as unknown as RuntimeSession
const user: TurnMessage = {
  info: { id: 'msg_user', role: 'user', time: { created: 1 } },
  parts: [{ type: 'text', text: 'go' }],
}
const answer = (completed: boolean): TurnMessage => ({
  info: {
    id: 'msg_answer',
    role: 'assistant',
    parentID: 'msg_user',
    time: { created: 2, ...(completed && { completed: 3 }) },
    ...(completed && { finish: 'stop' }),
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
    abortSession: async () => {
      calls.push('abort')
    },
    waitUntil: async () => undefined,
  } as unknown as RuntimePort
  return { port, calls }
}

const job = { messageId: 'msg_user', startedAt: 0 }

describe('jobStatus never reports a live run as over', () => {
  it('reads the status BEFORE the messages, one after the other', async () => {
    const { port, calls } = runtime([[user, answer(true)]], ['idle'])
    expect(await jobStatus(context(port), SESSION, job)).toMatchObject({
      status: 'completed',
      text: 'all done',
    })
    // A completed run costs no extra read.
    expect(calls).toEqual(['status', 'messages'])
  })

  it('an idle session with an unfinished answer that moved moments ago: running', async () => {
    const { port, calls } = runtime([[user, answer(false)]], ['idle'])
    expect(await jobStatus(context(port, 10), SESSION, job)).toMatchObject({ status: 'running' })
    expect(calls).toEqual(['status', 'messages'])
  })

  it('an idle session with no answer yet, 10 s after the prompt (loaded runtime): running', async () => {
    const { port } = runtime([[user]], ['idle'])
    expect(await jobStatus(context(port, 10_000), SESSION, job)).toMatchObject({ status: 'running' })
  })

  it('a dead-looking run that the confirming read shows completed: completed', async () => {
    const { port, calls } = runtime(
      [
        [user, answer(false)],
        [user, answer(true)],
      ],
      ['idle'],
    )
    expect(await jobStatus(context(port), SESSION, job)).toMatchObject({
      status: 'completed',
      text: 'all done',
    })
    expect(calls).toEqual(['status', 'messages', 'status', 'messages'])
  })

  it('a dead-looking run that the confirming read shows busy: running', async () => {
    const { port } = runtime([[user, answer(false)]], ['idle', 'busy'])
    expect(await jobStatus(context(port), SESSION, job)).toMatchObject({ status: 'running' })
  })

  it('a turn really left unfinished by a killed process, quiet for the bound, twice: failed (Interrupted)', async () => {
    const { port, calls } = runtime([[user, answer(false)]], ['idle'])
    const now = 3 + DEAD_AFTER_MS
    expect(await jobStatus(context(port, now), SESSION, job)).toMatchObject({
      status: 'failed',
      error: { name: 'Interrupted' },
    })
    expect(calls).toEqual(['status', 'messages', 'status', 'messages'])
  })

  it('a run lost before any answer ends as cancelled only after the bound', async () => {
    const { port } = runtime([[user]], ['idle'])
    expect(await jobStatus(context(port, DEAD_AFTER_MS - 1), SESSION, job)).toMatchObject({
      status: 'running',
    })
    expect(await jobStatus(context(port, DEAD_AFTER_MS + 1), SESSION, job)).toMatchObject({
      status: 'cancelled',
    })
  })

  it("the gateway's own cancel of a run with no answer yet is cancelled at once", async () => {
    const { port } = runtime([[user]], ['idle'])
    const ctx = context(port, 10)
    keepCancelled(ctx, SESSION.id, job, new Set())
    expect(await jobStatus(ctx, SESSION, job)).toMatchObject({ status: 'cancelled' })
  })
})

describe('waitForJob rides out a runtime that does not answer (a busy machine)', () => {
  const timeout = new UpstreamError('ERR_UPSTREAM_TIMEOUT', 'upstream session.messages timed out', {
    operation: 'session.messages',
    isRetryable: true,
  })
  /** A port whose waitUntil runs the check once, then again only on the test's events. */
  function flaky(results: Array<TurnMessage[] | Error>) {
    let reads = 0
    const port = {
      statusOf: async () => 'idle',
      messages: async () => {
        const next = results[Math.min(reads++, results.length - 1)] as TurnMessage[] | Error
        if (next instanceof Error) throw next
        return next
      },
      permissions: async () => [],
      questions: async () => [],
      messageDiff: async () => [],
      todos: async () => [],
      waitUntil: async <T>(
        _id: string,
        check: () => Promise<T | undefined>,
        options: { timeoutMs: number },
      ) => {
        const value = await check()
        if (value !== undefined) return value
        await new Promise((resolve) => setTimeout(resolve, options.timeoutMs))
        return undefined
      },
    } as unknown as RuntimePort
    return { port, reads: () => reads }
  }
  const realClock = (port: RuntimePort): JobContext => ({ ...context(port), now: Date.now })

  it('reads that time out are tried again until one answers', async () => {
    const { port, reads } = flaky([timeout, timeout, [user, answer(true)]])
    const status = await waitForJob(realClock(port), SESSION, { ...job, startedAt: Date.now() }, 10_000)
    expect(status).toMatchObject({ status: 'completed', text: 'all done' })
    expect(reads()).toBe(3)
  })

  it('a wait in which no read succeeded ends with the runtime failure at its deadline, not before', async () => {
    const { port, reads } = flaky([timeout])
    const started = Date.now()
    await expect(
      waitForJob(realClock(port), SESSION, { ...job, startedAt: Date.now() }, 1_200),
    ).rejects.toMatchObject({ code: 'ERR_UPSTREAM_TIMEOUT' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_100)
    expect(reads()).toBeGreaterThanOrEqual(2)
  })

  it('a run seen running before the runtime stopped answering is still running at the deadline', async () => {
    const { port } = flaky([[user, answer(false)], timeout])
    const status = await waitForJob(realClock(port), SESSION, { ...job, startedAt: Date.now() }, 700)
    expect(status).toMatchObject({ status: 'running' })
  })

  it('a failure a retry cannot mend (not found) ends the wait at once', async () => {
    const gone = new UpstreamError('ERR_UPSTREAM_NOT_FOUND', '404', {
      operation: 'session.messages',
      isRetryable: false,
    })
    const { port, reads } = flaky([gone])
    await expect(
      waitForJob(realClock(port), SESSION, { ...job, startedAt: Date.now() }, 10_000),
    ).rejects.toMatchObject({ code: 'ERR_UPSTREAM_NOT_FOUND' })
    expect(reads()).toBe(1)
  })
})

describe('retryState', () => {
  const redactor = createRedactor()

  it('reports the attempt, the next try as an ISO time and the message without keys', () => {
    expect(
      retryState(redactor, {
        attempt: 3,
        message: 'Bearer abc.def-123456789012345678 refused',
        next: 1_800_000_000_000,
      }),
    ).toEqual({
      attempt: 3,
      nextRetryAt: new Date(1_800_000_000_000).toISOString(),
      message: 'Bearer [redacted] refused',
    })
  })

  it('leaves out a next time that is not one, and an empty message, instead of inventing them', () => {
    expect(retryState(redactor, { attempt: 1, message: '  ', next: Number.NaN })).toEqual({ attempt: 1 })
  })

  it('is absent without a retry', () => {
    expect(retryState(redactor, undefined)).toBeUndefined()
  })
})
