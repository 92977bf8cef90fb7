import type {
  RuntimeFileDiff,
  RuntimePermission,
  RuntimePort,
  RuntimeQuestion,
  RuntimeRetry,
  RuntimeStatus,
  RuntimeTodo,
} from '../runtime/port.js'
import type { TurnMessage } from './derive-job-state.js'

// One read of what a job's state is derived from, shared by everyone who waits on the session.
//
// Order: the run status FIRST, then the messages. The runtime completes a run's last message
// before it marks the session idle, so an idle status read before the messages can never be
// paired with an answer older than it (read the other way round, or at the same time, "idle +
// unfinished answer" showed up for live runs: 7 of 12 runs measured). Pending asks are read
// after both, only for a session that is not idle.
//
// Sharing: N clients waiting on one session are woken by the same runtime event; each needs a
// read that STARTED after that event (it must never see data older than what woke it). A read
// in flight that started after the event serves them all, so N waiters cost one read per event
// instead of N. Only reads in flight are shared, never a finished one: a finished read may be
// older than a change whose event has not arrived yet.
//
// What a finished job reports (its diff and the todos) is read together with the messages as soon
// as the status shows the session idle, for the jobs the readers asked about (`ReadNeed.outcomeOf`):
// a waiter woken by the end of a run answers after one round of reads, not two.
//
// The status from the event stream: when the port's event view is in sync and says the session
// is idle (`RuntimePort.eventStatusOf`), that stands for the status read. The view holds every
// status event received, so its `idle` is what a status read made when the last event arrived
// would have said, and the messages are read after it: the order above still holds. A waiter
// woken by the runtime's idle event therefore answers after ONE round of reads (messages, diff
// and todos at once). Not for a confirming re-read (`ReadNeed.after`) nor after the caller's own
// change (`fresh`): those read the runtime's status, as decisions do. With that `idle`, the todos
// come from the event view too when it knows the session (`RuntimePort.eventTodosOf`: complete up
// to the same last event), and the waiter's one round is one read: its messages.

/** One consistent read of a session's run: status (read, or the event view's idle), then messages, then pending asks. */
export interface TurnSnapshot {
  readonly status: RuntimeStatus
  /** With status `retry`: the failed model request the runtime retries (when the port says). */
  readonly retry?: RuntimeRetry
  readonly messages: TurnMessage[]
  readonly permissions: RuntimePermission[]
  readonly questions: RuntimeQuestion[]
  /** The files changed by the run of `messageId`, and the session's todos (read once, shared). */
  outcome(messageId: string): Promise<[RuntimeFileDiff[], RuntimeTodo[]]>
  /** Position of this read in the port's order of finished reads (see `ReadNeed.after`). */
  readonly finished: number
  /** Events the port had seen when this read started (-Infinity when the port does not count). */
  readonly sequence: number
}

/** How fresh a read must be. */
export interface ReadNeed {
  /**
   * The event sequence number (`RuntimePort.eventSequence`) the read must reflect: it must have
   * started when the port had seen at least this many events. Default: the current number.
   */
  sequence?: number
  /** The read must have started after this one finished (a confirming re-read). */
  after?: TurnSnapshot
  /** The read must start now: it shares no read in flight (one that began before a change this caller made). */
  fresh?: boolean
  /**
   * The run (its message id) the caller will want the outcome of if it is over: read with the
   * messages when the status shows the session idle, instead of after them.
   */
  outcomeOf?: string
  /**
   * The job (its user message id) the read is for: only the messages from it on are needed
   * (`RuntimePort.messages`). Absent: every message. A read serves another caller only for the
   * same job, or when it read every message.
   */
  from?: string
}

interface Flight {
  /** Events seen when the read started. */
  sequence: number
  /** Reads finished when it started. */
  finishedBefore: number
  /** The runs whose outcome its readers want (see `ReadNeed.outcomeOf`). */
  outcomesWanted: Set<string>
  /** Its status is the event view's `idle`, not a read (never serves a confirming re-read). */
  fromEvents: boolean
  /** The messages it reads start at this user message (undefined: all of them). */
  from: string | undefined
  promise: Promise<TurnSnapshot>
}

interface Registry {
  flights: Map<string, Flight>
  finished: number
}

const registries = new WeakMap<RuntimePort, Registry>()

function registryOf(runtime: RuntimePort): Registry {
  let registry = registries.get(runtime)
  if (!registry) {
    registry = { flights: new Map(), finished: 0 }
    registries.set(runtime, registry)
  }
  return registry
}

/**
 * A read of the session's run that satisfies `need`: the one in flight when it does, else a new
 * one (which later callers may share). A port that does not count events shares nothing.
 */
export function readTurn(
  runtime: RuntimePort,
  sessionId: string,
  need: ReadNeed = {},
): Promise<TurnSnapshot> {
  const registry = registryOf(runtime)
  const sequence = runtime.eventSequence?.()
  const flight = registry.flights.get(sessionId)
  if (
    flight &&
    need.fresh !== true &&
    sequence !== undefined &&
    flight.sequence >= (need.sequence ?? sequence) &&
    flight.finishedBefore >= (need.after?.finished ?? 0) &&
    (flight.from === undefined || flight.from === need.from) &&
    !(flight.fromEvents && need.after !== undefined)
  ) {
    if (need.outcomeOf !== undefined) flight.outcomesWanted.add(need.outcomeOf)
    return flight.promise
  }
  const started: Flight = {
    sequence: sequence ?? Number.NEGATIVE_INFINITY,
    finishedBefore: registry.finished,
    outcomesWanted: new Set(need.outcomeOf === undefined ? [] : [need.outcomeOf]),
    from: need.from,
    fromEvents:
      need.fresh !== true && need.after === undefined && runtime.eventStatusOf?.(sessionId) === 'idle',
    promise: Promise.resolve(undefined as never),
  }
  started.promise = readOnce(runtime, sessionId, started, () => ++registry.finished).finally(() => {
    if (registry.flights.get(sessionId) === started) registry.flights.delete(sessionId)
  })
  registry.flights.set(sessionId, started)
  return started.promise
}

async function readOnce(
  runtime: RuntimePort,
  sessionId: string,
  flight: Flight,
  finish: () => number,
): Promise<TurnSnapshot> {
  const outcomes = new Map<string, Promise<[RuntimeFileDiff[], RuntimeTodo[]]>>()
  let messagesRead: Promise<TurnMessage[]> | undefined
  // The run's diff comes with the messages when the port can take it from them (the runtime
  // answers its diff endpoint from the same records); else it is read beside them.
  const diffOf = (messageId: string): Promise<RuntimeFileDiff[]> =>
    messagesRead && runtime.turnDiff
      ? messagesRead.then(
          (messages) => runtime.turnDiff?.(messages, messageId) ?? runtime.messageDiff(sessionId, messageId),
        )
      : runtime.messageDiff(sessionId, messageId)
  const outcome = (messageId: string): Promise<[RuntimeFileDiff[], RuntimeTodo[]]> => {
    let read = outcomes.get(messageId)
    if (!read) {
      // With the status from the event view, its todos too (known up to the same last event):
      // a waiter woken by the end of a run then needs one read, its messages.
      const known = flight.fromEvents ? runtime.eventTodosOf?.(sessionId) : undefined
      read = Promise.all([diffOf(messageId), known ? Promise.resolve(known) : runtime.todos(sessionId)])
      outcomes.set(messageId, read)
      // A failed read is not kept: the next caller asks again.
      read.catch(() => outcomes.delete(messageId))
    }
    return read
  }
  const { status, retry } = flight.fromEvents
    ? { status: 'idle' as const, retry: undefined }
    : runtime.statusDetailOf
      ? await runtime.statusDetailOf(sessionId)
      : { status: await runtime.statusOf(sessionId), retry: undefined }
  messagesRead =
    flight.from === undefined
      ? runtime.messages(sessionId)
      : runtime.messages(sessionId, { from: flight.from })
  // Idle: every run is over, so the outcome of the runs asked about is read beside the messages.
  if (status === 'idle') for (const messageId of flight.outcomesWanted) outcome(messageId)
  const messages = await messagesRead
  const [permissions, questions] =
    status === 'idle'
      ? [[], []]
      : await Promise.all([runtime.permissions(sessionId), runtime.questions(sessionId)])
  return {
    status,
    ...(retry !== undefined && { retry }),
    messages,
    permissions,
    questions,
    finished: finish(),
    sequence: flight.sequence,
    outcome,
  }
}
