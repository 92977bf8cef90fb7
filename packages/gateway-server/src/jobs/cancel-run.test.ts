import { describe, expect, it, vi } from 'vitest'
import { createRedactor } from '../redact.js'
import type { RuntimePort, RuntimeSession, RuntimeStatus } from '../runtime/port.js'
import type { OwnedSessions } from '../sessions/owned.js'
import { CANCEL_CONFIRM_MS, cancelRun, RUN_EVENTS_STOP, stopWhenOverdrawn } from './cancel-run.js'
import type { TurnMessage } from './derive-job-state.js'
import { type JobContext, jobStatus } from './job-status.js'

// job.cancel after the review: a cancel 0.1 s after the start was answered `cancelled`, the
// runtime had lost the abort (the run had not begun), and the run went on and completed. The
// runtime below is a small state machine of one run; `cancelRun` must answer `cancelled` only for
// a run the runtime stopped (or one that never began), and `finished` for a run that ended first.

const SESSION = { id: 'ses_1', time: { created: 1, updated: 1 } } as unknown as RuntimeSession
const JOB = { messageId: 'msg_user', startedAt: 0 }
const user: TurnMessage = {
  info: { id: 'msg_user', role: 'user', time: { created: 1 } },
  parts: [{ type: 'text', text: 'go' }],
}
const answer = (fields: Partial<TurnMessage['info']>, text = ''): TurnMessage => ({
  info: { id: 'msg_a', role: 'assistant', parentID: 'msg_user', time: { created: 2 }, ...fields },
  parts: text ? [{ type: 'text', text }] : [],
})

interface Run {
  /** Reads until the run begins (the runtime's start lag); an abort before that is lost. */
  beginsAfter: number
  /** Reads the run stays live before it finishes on its own. */
  finishesAfter: number
  /** The run waits on a permission: the cancel's rejection ends the turn as a refused step. */
  asks?: boolean
}

/** One run of one session; every read advances the clock by 100 ms. */
function runtime(run: Run) {
  let reads = 0
  let phase: 'waiting' | 'live' | 'aborted' | 'completed' | 'refused' =
    run.beginsAfter === 0 ? 'live' : 'waiting'
  const aborts: Array<'lost' | 'taken'> = []
  let clock = 1_000
  const advance = (): void => {
    reads++
    clock += 100
    if (phase === 'waiting' && reads >= run.beginsAfter) phase = 'live'
    if (phase === 'live' && !run.asks && reads >= run.beginsAfter + run.finishesAfter) phase = 'completed'
  }
  const messages = (): TurnMessage[] => {
    switch (phase) {
      case 'waiting':
        return [user]
      case 'live':
        return [user, answer({})]
      case 'aborted':
        return [user, answer({ time: { created: 2, completed: 3 }, error: { name: 'MessageAbortedError' } })]
      case 'completed':
        return [user, answer({ time: { created: 2, completed: 3 }, finish: 'stop' }, 'DONE')]
      case 'refused':
        return [
          user,
          {
            info: {
              id: 'msg_a',
              role: 'assistant',
              parentID: 'msg_user',
              time: { created: 2, completed: 3 },
              finish: 'tool-calls',
            },
            parts: [
              {
                type: 'tool',
                tool: 'bash',
                state: {
                  status: 'error',
                  error: 'The user rejected permission to use this specific tool call.',
                },
              },
            ],
          },
        ]
    }
  }
  const port = {
    statusOf: async (): Promise<RuntimeStatus> => {
      advance()
      return phase === 'live' ? 'busy' : 'idle'
    },
    messages: async () => messages(),
    permissions: async () =>
      phase === 'live' && run.asks
        ? [{ id: 'per_1', sessionID: 'ses_1', permission: 'bash', patterns: [] }]
        : [],
    questions: async () => [],
    messageDiff: async () => [],
    todos: async () => [],
    abortSession: async () => {
      if (phase === 'live') {
        phase = run.asks ? 'refused' : 'aborted'
        aborts.push('taken')
      } else aborts.push('lost')
    },
    waitUntil: async <T>(_id: string, check: () => Promise<T | undefined>) => check(),
  } as unknown as RuntimePort
  const ctx: JobContext = {
    principal: { policy: 'chat' } as JobContext['principal'],
    runtime: port,
    owned: {
      sealSession: async () => 'v1.session',
      sealJob: async () => 'v1.job',
      sealInteraction: async () => 'v1.interaction',
    } as unknown as OwnedSessions,
    redactor: createRedactor(),
    now: () => clock,
  }
  return { ctx, aborts, phase: () => phase }
}

describe('cancelRun answers cancelled only for a run that was stopped', () => {
  it('an abort lost before the run began is sent again the moment the run is live: cancelled, and it stays so', async () => {
    const rt = runtime({ beginsAfter: 3, finishesAfter: 2 })
    expect(await cancelRun(rt.ctx, SESSION.id, JOB, new Set(), { begun: false })).toBe('cancelled')
    expect(rt.aborts).toEqual(['lost', 'taken'])
    expect(rt.phase()).toBe('aborted')
    expect(await jobStatus(rt.ctx, SESSION, JOB)).toMatchObject({ status: 'cancelled' })
  })

  it('a run that finishes on its own before any abort takes: finished (the cancel did not happen)', async () => {
    const rt = runtime({ beginsAfter: 1, finishesAfter: 0 })
    expect(await cancelRun(rt.ctx, SESSION.id, JOB, new Set(), { begun: false })).toBe('finished')
    expect(await jobStatus(rt.ctx, SESSION, JOB)).toMatchObject({ status: 'completed', text: 'DONE' })
  })

  it('a live run is aborted at once: cancelled after one abort', async () => {
    const rt = runtime({ beginsAfter: 0, finishesAfter: 50 })
    expect(await cancelRun(rt.ctx, SESSION.id, JOB, new Set(), { begun: true })).toBe('cancelled')
    expect(rt.aborts).toEqual(['taken'])
  })

  it('a run waiting on a permission: the rejected ask ends the turn, which is the cancel', async () => {
    const rt = runtime({ beginsAfter: 0, finishesAfter: 50, asks: true })
    expect(await cancelRun(rt.ctx, SESSION.id, JOB, new Set(), { begun: true })).toBe('cancelled')
    expect(rt.phase()).toBe('refused')
  })

  it('a run that has not begun by the deadline: cancelled, remembered, and aborted once it shows up', async () => {
    const reads = CANCEL_CONFIRM_MS / 100 + 5
    const rt = runtime({ beginsAfter: reads, finishesAfter: 50 })
    expect(await cancelRun(rt.ctx, SESSION.id, JOB, new Set(), { begun: false })).toBe('cancelled')
    expect(rt.phase()).toBe('waiting')
    // The job reads cancelled from the gateway's own record while the run has not begun.
    expect(await jobStatus(rt.ctx, SESSION, JOB)).toMatchObject({ status: 'cancelled' })
  })
})

describe('stopWhenOverdrawn stops a run once its credential is a whole burst in debt', () => {
  const setup = (run: Run) => {
    const rt = runtime(run)
    const warn = vi.fn()
    const hold = new Set<string>()
    let overdrawn = false
    const charged: number[] = []
    const count = stopWhenOverdrawn({ ...rt.ctx, logger: { warn } as never }, SESSION.id, JOB, hold, (n) => {
      charged.push(n)
      return overdrawn
    })
    return { rt, warn, hold, count, charged, overdraw: () => (overdrawn = true) }
  }

  it('counts every event, and stops nothing while the credential is not at its floor', () => {
    const t = setup({ beginsAfter: 0, finishesAfter: 50 })
    t.count(3)
    t.count(4)
    expect(t.charged).toEqual([3, 4])
    expect(t.rt.aborts).toEqual([])
    expect(t.warn).not.toHaveBeenCalled()
  })

  it('at the floor: aborts once, reads cancelled with RateLimited, logs the outcome, lets the session go', async () => {
    const t = setup({ beginsAfter: 0, finishesAfter: 50 })
    t.overdraw()
    t.count(1)
    t.count(1) // already stopping: no second stop
    await vi.waitFor(() => expect(t.warn).toHaveBeenCalledTimes(1))
    expect(t.warn.mock.calls[0]?.[0]).toMatchObject({ event: 'run_stopped', outcome: 'cancelled' })
    expect(t.rt.aborts).toEqual(['taken'])
    expect(t.hold.size).toBe(0)
    expect(t.charged).toEqual([1, 1])
    expect(await jobStatus(t.rt.ctx, SESSION, JOB)).toMatchObject({
      status: 'cancelled',
      error: RUN_EVENTS_STOP,
    })
  })

  it('a session held by another call is not touched; the next event tries again', async () => {
    const t = setup({ beginsAfter: 0, finishesAfter: 50 })
    t.overdraw()
    t.hold.add(SESSION.id)
    t.count(1)
    await Promise.resolve()
    expect(t.rt.aborts).toEqual([])
    expect(t.hold.has(SESSION.id)).toBe(true)
    t.hold.delete(SESSION.id)
    t.count(1)
    await vi.waitFor(() => expect(t.warn).toHaveBeenCalledTimes(1))
    expect(t.rt.aborts).toEqual(['taken'])
  })

  it('a run that ended before the stop took is not said to be stopped', async () => {
    const t = setup({ beginsAfter: 0, finishesAfter: 1 })
    await t.rt.ctx.runtime.statusOf(SESSION.id) // the run completes (its events come in with its end)
    expect(t.rt.phase()).toBe('completed')
    t.overdraw()
    t.count(1)
    await vi.waitFor(() => expect(t.warn).toHaveBeenCalledTimes(1))
    expect(t.warn.mock.calls[0]?.[0]).toMatchObject({ outcome: 'finished' })
    expect(t.warn.mock.calls[0]?.[1]).toMatch(/^run not stopped/)
    expect(await jobStatus(t.rt.ctx, SESSION, JOB)).toMatchObject({ status: 'completed' })
  })
})
