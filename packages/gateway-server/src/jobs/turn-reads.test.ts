import { describe, expect, it } from 'vitest'
import type { RuntimePort, RuntimeSession, RuntimeStatus, RuntimeTodo, RuntimeWake } from '../runtime/port.js'
import type { TurnMessage } from './derive-job-state.js'
import { type JobContext, waitForJob } from './job-status.js'
import { jobContext } from './test-context.js'
import { readTurn } from './turn-reads.js'

const context = (port: RuntimePort): JobContext => jobContext(port, () => 10)

// Issue 10, finding 4: 300 clients waiting on one job each re-read messages, status, permissions
// and questions on every event, and the runtime could not keep up. Waiters of one session now
// share one read per event.

const SESSION = { id: 'ses_1', time: { created: 1, updated: 1 } } as unknown as RuntimeSession
const user: TurnMessage = { info: { id: 'msg_u', role: 'user', time: { created: 1 } }, parts: [] }

/**
 * A runtime with a counting read API and an event source that follows the `waitUntil`
 * contract of the real port (a check at once, again after each event, never overlapping).
 */
function countingRuntime(options: {
  countsEvents: boolean
  /** The port's event view (`eventStatusOf`); absent: the port has none. */
  view?: () => RuntimeStatus | undefined
  /** The port's todo view (`eventTodosOf`); absent: the port has none. */
  todoView?: () => RuntimeTodo[] | undefined
}) {
  const reads = { status: 0, messages: 0, permissions: 0, questions: 0, diff: 0, todos: 0 }
  /** The options of every wait the port was asked for. */
  const waits: Array<{ timeoutMs: number; afterBurst?: boolean }> = []
  let status: RuntimeStatus = 'busy'
  let messages: TurnMessage[] = [user]
  let sequence = 0
  const listeners = new Set<() => void>()
  const later = () => new Promise((resolve) => setTimeout(resolve, 2))
  const port = {
    statusOf: async () => {
      reads.status++
      await later()
      return status
    },
    messages: async () => {
      reads.messages++
      await later()
      return structuredClone(messages)
    },
    permissions: async () => {
      reads.permissions++
      return []
    },
    questions: async () => {
      reads.questions++
      return []
    },
    messageDiff: async () => {
      reads.diff++
      return []
    },
    todos: async () => {
      reads.todos++
      return []
    },
    ...(options.countsEvents && { eventSequence: () => sequence }),
    ...(options.view && { eventStatusOf: options.view }),
    ...(options.todoView && { eventTodosOf: options.todoView }),
    waitUntil: <T>(
      _id: string,
      check: (wake?: RuntimeWake) => Promise<T | undefined>,
      opts: { timeoutMs: number; afterBurst?: boolean },
    ): Promise<T | undefined> =>
      new Promise((resolve, reject) => {
        waits.push(opts)
        let running = false
        let again = false
        const timer = setTimeout(() => done(undefined), opts.timeoutMs)
        const done = (value: T | undefined) => {
          clearTimeout(timer)
          listeners.delete(trigger)
          resolve(value)
        }
        const trigger = (): void => {
          if (running) {
            again = true
            return
          }
          running = true
          void (async () => {
            try {
              do {
                again = false
                const value = await check({ sequence })
                if (value !== undefined) return done(value)
              } while (again)
            } catch (error) {
              reject(error)
            } finally {
              running = false
            }
          })()
        }
        listeners.add(trigger)
        trigger()
      }),
  } as unknown as RuntimePort
  return {
    port,
    reads,
    waits,
    /** A runtime event: the runtime changed, then told its subscribers. */
    emit(change?: () => void) {
      change?.()
      sequence++
      for (const listener of [...listeners]) listener()
    },
    complete() {
      messages = [
        user,
        {
          info: {
            id: 'msg_a',
            role: 'assistant',
            parentID: 'msg_u',
            time: { created: 2, completed: 3 },
            finish: 'stop',
          },
          parts: [{ type: 'text', text: 'done' }],
        },
      ]
      status = 'idle'
    },
    waiting: () => listeners.size,
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50))
const job = { messageId: 'msg_u', startedAt: 0 }
const N = 200

describe('waiters on one session share the upstream reads', () => {
  it(`${N} waiters on one job cost one read per event, not ${N}`, async () => {
    const rt = countingRuntime({ countsEvents: true })
    const ctx = context(rt.port)
    const waits = Array.from({ length: N }, () => waitForJob(ctx, SESSION, job, 10_000))
    await settle()
    expect(rt.waiting()).toBe(N)
    // The first checks of waiters that started together share a read too.
    expect(rt.reads.status).toBe(1)

    const perEvent: number[] = []
    for (let i = 0; i < 5; i++) {
      const before = rt.reads.status
      rt.emit() // e.g. a part of the answer was stored: still running
      await settle()
      perEvent.push(rt.reads.status - before)
    }
    const before = { ...rt.reads }
    rt.emit(() => rt.complete())
    const results = await Promise.all(waits)
    expect(results.every((r) => r.status === 'completed' && r.text === 'done')).toBe(true)
    expect(perEvent).toEqual([1, 1, 1, 1, 1])
    // The completing event: one status, one messages, one diff and one todos read for all.
    expect(rt.reads.status - before.status).toBe(1)
    expect(rt.reads.messages - before.messages).toBe(1)
    expect(rt.reads.diff - before.diff).toBe(1)
    expect(rt.reads.todos - before.todos).toBe(1)
    // Pending asks are read once per read of a busy session, never per waiter.
    expect(rt.reads.permissions).toBe(rt.reads.status - 1)
  })

  it(`without event numbers nothing is shared (the cost before: ${N} reads per event)`, async () => {
    const rt = countingRuntime({ countsEvents: false })
    const ctx = context(rt.port)
    const waits = Array.from({ length: N }, () => waitForJob(ctx, SESSION, job, 10_000))
    await settle()
    const before = rt.reads.status
    rt.emit()
    await settle()
    expect(rt.reads.status - before).toBe(N)
    rt.emit(() => rt.complete())
    await Promise.all(waits)
  })

  it('never hands a waiter a read that started before the event that woke it', async () => {
    const rt = countingRuntime({ countsEvents: true })
    const early = readTurn(rt.port, SESSION.id) // in flight, started before the completion
    early.catch(() => undefined)
    rt.complete()
    rt.emit()
    const fresh = readTurn(rt.port, SESSION.id, { sequence: 1 })
    expect(fresh).not.toBe(early)
    // A read asked for with no newer event shares the one in flight.
    expect(readTurn(rt.port, SESSION.id, { sequence: 1 })).toBe(fresh)
    expect((await fresh).status).toBe('idle')
    // A finished read is never handed out again: the next one reads anew.
    expect(readTurn(rt.port, SESSION.id, { sequence: 1 })).not.toBe(fresh)
  })

  it('a fresh read (after a change this caller made, before its event came) never shares one in flight', async () => {
    const rt = countingRuntime({ countsEvents: true })
    const early = readTurn(rt.port, SESSION.id) // started before the caller's change
    early.catch(() => undefined)
    rt.complete() // e.g. the question was answered: no event has arrived yet
    const fresh = readTurn(rt.port, SESSION.id, { fresh: true })
    expect(fresh).not.toBe(early)
    expect((await fresh).status).toBe('idle')
    await early
  })

  it('a confirming read is always a new one, started after the read it confirms', async () => {
    const rt = countingRuntime({ countsEvents: true })
    const first = await readTurn(rt.port, SESSION.id)
    const inFlight = readTurn(rt.port, SESSION.id)
    const again = readTurn(rt.port, SESSION.id, { after: first })
    // `inFlight` started after `first` finished, so it may serve as the confirmation.
    expect(again).toBe(inFlight)
    const confirmed = await again
    const next = readTurn(rt.port, SESSION.id, { after: confirmed })
    expect(next).not.toBe(again)
    await next
  })
})

describe('the outcome of a finished run is read with the messages', () => {
  /** A port whose messages read is held open until `release()`; logs when each read starts. */
  function heldRuntime(status: RuntimeStatus) {
    const log: string[] = []
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const port = {
      eventSequence: () => 0,
      statusOf: async () => {
        log.push('status')
        return status
      },
      messages: async () => {
        log.push('messages')
        await held
        log.push('messages done')
        return [user]
      },
      permissions: async () => [],
      questions: async () => [],
      messageDiff: async (_s: string, messageId: string) => {
        log.push(`diff ${messageId}`)
        return []
      },
      todos: async () => {
        log.push('todos')
        return []
      },
    } as unknown as RuntimePort
    return { port, log, release }
  }

  it('an idle session: the diff and todos of the runs asked about start before the messages are in', async () => {
    const rt = heldRuntime('idle')
    const read = readTurn(rt.port, SESSION.id, { outcomeOf: 'msg_u' })
    // A second reader of the same flight, for another run, joins before the status is known.
    expect(readTurn(rt.port, SESSION.id, { outcomeOf: 'msg_v' })).toBe(read)
    await settle()
    expect(rt.log).toEqual(['status', 'messages', 'diff msg_u', 'todos', 'diff msg_v', 'todos'])
    rt.release()
    const snapshot = await read
    const before = rt.log.length
    await snapshot.outcome('msg_u')
    await snapshot.outcome('msg_v')
    // Asked again: the reads already made, none new.
    expect(rt.log.length).toBe(before)
  })

  it('a port that takes the diff from the messages: no diff read, the todos read beside the messages', async () => {
    const rt = heldRuntime('idle')
    const changed = [{ path: 'a.txt', additions: 1, deletions: 0 }]
    const port = rt.port as RuntimePort
    port.turnDiff = (messages, messageId) => {
      rt.log.push(`diff of ${messageId} from ${messages.length} messages`)
      return messageId === 'msg_u' ? changed : undefined
    }
    const read = readTurn(port, SESSION.id, { outcomeOf: 'msg_u' })
    expect(readTurn(port, SESSION.id, { outcomeOf: 'msg_v' })).toBe(read)
    await settle()
    expect(rt.log).toEqual(['status', 'messages', 'todos', 'todos'])
    rt.release()
    const snapshot = await read
    expect((await snapshot.outcome('msg_u'))[0]).toEqual(changed)
    // Messages that do not hold it in a known shape: the diff is read.
    await snapshot.outcome('msg_v')
    expect(rt.log.slice(4)).toEqual([
      'messages done',
      'diff of msg_u from 1 messages',
      'diff of msg_v from 1 messages',
      'diff msg_v',
    ])
  })

  it('a busy session: nothing but the run state is read (a run going on has no outcome yet)', async () => {
    const rt = heldRuntime('busy')
    const read = readTurn(rt.port, SESSION.id, { outcomeOf: 'msg_u' })
    await settle()
    rt.release()
    await read
    expect(rt.log).toEqual(['status', 'messages', 'messages done'])
  })
})

describe("the event stream's idle stands for the status read", () => {
  it(`${N} waiters woken by the end of the run: one round of reads (messages, diff, todos), no status read`, async () => {
    let view: RuntimeStatus | undefined = 'busy'
    const rt = countingRuntime({ countsEvents: true, view: () => view })
    const ctx = context(rt.port)
    const waits = Array.from({ length: N }, () => waitForJob(ctx, SESSION, job, 10_000))
    await settle()
    // The view says busy: the status is read (a busy session's asks need it).
    expect(rt.reads.status).toBe(1)
    const before = { ...rt.reads }
    rt.emit(() => {
      rt.complete()
      view = 'idle'
    })
    const results = await Promise.all(waits)
    expect(results.every((r) => r.status === 'completed' && r.text === 'done')).toBe(true)
    expect(rt.reads.status - before.status).toBe(0)
    expect(rt.reads.messages - before.messages).toBe(1)
    expect(rt.reads.diff - before.diff).toBe(1)
    expect(rt.reads.todos - before.todos).toBe(1)
    expect(rt.reads.permissions - before.permissions).toBe(0)
  })

  it(`${N} waiters woken by the end of the run, the todos known to the event view: one read (the messages)`, async () => {
    let view: RuntimeStatus | undefined = 'busy'
    const todos: RuntimeTodo[] = [{ content: 'check output', status: 'completed', priority: 'high' }]
    const rt = countingRuntime({ countsEvents: true, view: () => view, todoView: () => todos })
    const ctx = context(rt.port)
    const waits = Array.from({ length: N }, () => waitForJob(ctx, SESSION, job, 10_000))
    await settle()
    const before = { ...rt.reads }
    rt.emit(() => {
      rt.complete()
      view = 'idle'
    })
    const results = await Promise.all(waits)
    expect(results.every((r) => r.status === 'completed' && r.todos?.length === 1)).toBe(true)
    expect(results[0]).toMatchObject({
      todos: [{ content: 'check output', status: 'completed', priority: 'high' }],
    })
    expect(rt.reads.messages - before.messages).toBe(1)
    expect(rt.reads.todos - before.todos).toBe(0)
    expect(rt.reads.status - before.status).toBe(0)
    // A job's wait asks the port to check a burst of events whole (the answer, then the idle).
    expect(rt.waits).toHaveLength(N)
    expect(rt.waits.every((w) => w.afterBurst === true)).toBe(true)
  })

  it('the todo view is used only beside the event view’s idle: a status read, or a view that does not know, reads the todos', async () => {
    const known: RuntimeTodo[] = [{ content: 'from the view', status: 'pending' }]
    // The status read from the runtime (view busy or out of sync): the todo view may lag it.
    for (const shown of [undefined, 'busy'] as const) {
      const rt = countingRuntime({ countsEvents: true, view: () => shown, todoView: () => known })
      rt.complete()
      const snapshot = await readTurn(rt.port, SESSION.id, { outcomeOf: job.messageId })
      const [, todos] = await snapshot.outcome(job.messageId)
      expect(rt.reads.todos).toBe(1)
      expect(todos).toEqual([])
    }
    // The idle from the event view, a session the todo view does not know: read.
    const rt = countingRuntime({ countsEvents: true, view: () => 'idle', todoView: () => undefined })
    rt.complete()
    const snapshot = await readTurn(rt.port, SESSION.id, { outcomeOf: job.messageId })
    await snapshot.outcome(job.messageId)
    expect(rt.reads.todos).toBe(1)
  })

  it('a view out of sync (stream down) or showing the session busy: the status is read', async () => {
    for (const shown of [undefined, 'busy', 'retry'] as const) {
      const rt = countingRuntime({ countsEvents: true, view: () => shown })
      rt.complete()
      const snapshot = await readTurn(rt.port, SESSION.id)
      expect(rt.reads.status).toBe(1)
      expect(snapshot.status).toBe('idle')
    }
  })

  it('a confirming read and a read after the caller’s own change ask the runtime, and share no read of the view', async () => {
    const rt = countingRuntime({ countsEvents: true, view: () => 'idle' })
    const first = await readTurn(rt.port, SESSION.id)
    expect(rt.reads.status).toBe(0)
    // In flight from the view, started after `first` finished: still not a confirmation.
    const fromView = readTurn(rt.port, SESSION.id)
    const again = readTurn(rt.port, SESSION.id, { after: first })
    expect(again).not.toBe(fromView)
    await Promise.all([fromView, again])
    expect(rt.reads.status).toBe(1)
    await readTurn(rt.port, SESSION.id, { fresh: true })
    expect(rt.reads.status).toBe(2)
  })

  it('a view lagging behind a run that began (its busy event not in yet) reads running, never an end', async () => {
    // The runtime is busy with the job's run and has stored an unfinished answer; the view still
    // shows the idle from before the run. Paired with those messages, the picture is "idle with
    // an unfinished answer": a live run, not a dead one.
    const rt = countingRuntime({ countsEvents: true, view: () => 'idle' })
    const ctx = context(rt.port)
    const unfinished: TurnMessage = {
      info: { id: 'msg_a', role: 'assistant', parentID: 'msg_u', time: { created: 2 } },
      parts: [{ type: 'text', text: 'half' }],
    }
    rt.emit(() => undefined)
    const port = rt.port as unknown as { messages: () => Promise<TurnMessage[]> }
    port.messages = async () => [user, unfinished]
    const status = await waitForJob(ctx, SESSION, job, 30)
    expect(status.status).toBe('running')
    // And with no answer at all yet (the user message only): running too, not cancelled.
    port.messages = async () => [user]
    expect((await waitForJob(ctx, SESSION, job, 30)).status).toBe('running')
  })
})
