import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RuntimePort, RuntimeSession, RuntimeStatus } from '../runtime/port.js'
import type { JobStatus } from '../schemas.js'
import type { TurnMessage } from './derive-job-state.js'
import { type JobContext, jobStatus, keepCancelled } from './job-status.js'
import { jobContext } from './test-context.js'

// Finding 1 of issue 10 as a property: a model of the runtime's timeline for one run (user
// message stored, the start lag, busy, steps, retries, asks, completion, idle; an abort, the
// gateway's cancel, the process dying), with every read the gateway makes placed at an arbitrary
// point of that timeline. Whatever the interleaving, a terminal state the gateway reports must be
// TRUE at the moment it reports it, and once the run is over (or dead, and quiet for the bound)
// the gateway must report the true terminal state.
//
// What the model takes from the runtime (measured on opencode 1.18.33, see derive-job-state.ts):
// - after the prompt, the user message is stored; the session then reads idle, with no answer or
//   (the review saw it) with the first answer already created, until the run has begun and the
//   session reads busy: seconds under load, always less than DEAD_AFTER_MS of quiet;
// - no step of a run completes before the session reads busy;
// - between steps the session stays busy (or retry, during provider back-off);
// - the last answer is completed (finish, error, abort) BEFORE the session goes idle;
// - an abort before the run began is lost; this gateway then aborts again when the run shows up
//   busy (keepCancelled), which the model does at once;
// - a dead process leaves the records as they were and the session idle.

const DEAD_AFTER = 60_000

type Step = 'tool-ok' | 'tool-fail-continue' | 'retry' | 'ask'
type Final = 'stop' | 'error' | 'tool-fail-end'
type Interrupt = 'abort' | 'gateway-cancel' | 'death'

interface Scenario {
  history: boolean
  preStore: number[]
  lag: number[]
  assistantBeforeBusy: boolean
  steps: Step[]
  final: Final
  interrupt: { kind: Interrupt; at: number } | undefined
  followUp: boolean
  busyDeltas: number[]
}

interface Truth {
  ended?: 'completed' | 'failed' | 'aborted'
  /** Aborted between steps or before any answer: the runtime recorded nothing of the abort. */
  recordless?: boolean
  /** The last recorded step ended in a failed tool call (what a rejected permission leaves). */
  lastStepFailed?: boolean
  dead: boolean
  userStored: boolean
  hasAnswer: boolean
  gatewayCancelled: boolean
}

const REFUSED = 'The user rejected permission to use this specific tool call.'
const SESSION_ID = 'ses_model'
const JOB_ID = 'msg_job'

/** The runtime of one session, driven event by event. */
class ModelRuntime {
  now = 0
  status: RuntimeStatus = 'idle'
  asks = 0
  messages: TurnMessage[] = []
  truth: Truth = { dead: false, userStored: false, hasAnswer: false, gatewayCancelled: false }
  begun = false
  over = false
  private interrupted = false
  private events: Array<() => void> = []
  private cursor = 0
  private ids = 0
  private busyDelta = 0

  constructor(private readonly s: Scenario) {
    if (s.history) {
      this.messages.push(userMessage('msg_old', -10_000))
      this.messages.push({
        info: {
          id: 'msg_old_a',
          role: 'assistant',
          parentID: 'msg_old',
          time: { created: -9_000, completed: -8_000 },
          finish: 'stop',
        },
        parts: [{ type: 'text', text: 'old answer' }],
      })
    }
    this.build()
  }

  private open(): TurnMessage | undefined {
    const last = this.messages.at(-1)
    return last &&
      last.info.role === 'assistant' &&
      last.info.parentID === JOB_ID &&
      !last.info.time.completed
      ? last
      : undefined
  }

  private tick(delta: number): void {
    this.now += delta
  }

  private build(): void {
    const s = this.s
    const push = (event: () => void) => this.events.push(event)
    // Before the user message is stored (the gateway already has the job handle).
    for (const d of s.preStore) push(() => this.tick(d))
    push(() => {
      this.messages.push(userMessage(JOB_ID, this.now))
      this.truth.userStored = true
    })
    // The start lag: idle, quiet; the run begins at some point of it (invisibly).
    const beginAt = s.lag.length === 0 ? 0 : s.lag.length - 1
    s.lag.forEach((d, i) => {
      push(() => {
        this.tick(d)
        if (i === beginAt) this.begun = true
      })
    })
    push(() => {
      this.begun = true
    })
    if (s.assistantBeforeBusy) push(() => this.createAssistant())
    push(() => this.setBusy())
    for (const step of s.steps) this.buildStep(step)
    this.buildFinal(s.final)
    push(() => this.end())
  }

  private createAssistant(): void {
    if (this.open()) return
    this.messages.push({
      info: { id: `msg_a${++this.ids}`, role: 'assistant', parentID: JOB_ID, time: { created: this.now } },
      parts: [],
    })
    this.truth.hasAnswer = true
  }

  private part(part: TurnMessage['parts'][number]): void {
    const open = this.open()
    if (open) (open.parts as unknown[]).push(part)
  }

  private complete(change: Partial<TurnMessage['info']>): void {
    const open = this.open()
    if (!open) return
    Object.assign(open.info, change, { time: { ...open.info.time, completed: this.now } })
  }

  private busyTick(): void {
    this.tick(this.s.busyDeltas[this.busyDelta++ % Math.max(1, this.s.busyDeltas.length)] ?? 0)
  }

  private setBusy(): void {
    this.status = 'busy'
    // keepCancelled: a cancel that came before the run began is repeated once it reads busy.
    if (this.truth.gatewayCancelled && !this.over) this.abort()
  }

  private buildStep(step: Step): void {
    const push = (event: () => void) => this.events.push(event)
    push(() => this.createAssistant())
    if (step === 'retry') {
      push(() => {
        this.status = 'retry'
        this.busyTick()
      })
      push(() => this.setBusy())
      push(() => {
        this.status = 'retry'
        this.busyTick()
      })
      push(() => this.setBusy())
    }
    push(() => {
      this.part({ type: 'step-start' })
      this.busyTick()
    })
    if (step === 'ask') {
      push(() => {
        this.asks = 1
        this.busyTick()
      })
      push(() => {
        this.asks = 0
        this.part({ type: 'tool', state: { status: 'completed', time: { start: this.now, end: this.now } } })
      })
      push(() => this.complete({ finish: 'tool-calls' }))
      return
    }
    if (step === 'retry') {
      push(() => this.part({ type: 'text', text: 'after retry' }))
      push(() => this.complete({ finish: 'tool-calls' }))
      return
    }
    push(() =>
      this.part({
        type: 'tool',
        state:
          step === 'tool-ok'
            ? { status: 'completed', time: { start: this.now, end: this.now } }
            : { status: 'error', error: 'ENOENT: no such file', time: { start: this.now, end: this.now } },
      }),
    )
    push(() => this.complete({ finish: 'tool-calls' }))
  }

  private buildFinal(final: Final): void {
    const push = (event: () => void) => this.events.push(event)
    push(() => this.createAssistant())
    push(() => {
      this.part({ type: 'step-start' })
      this.busyTick()
    })
    if (final === 'stop') {
      push(() => this.part({ type: 'text', text: 'the answer' }))
      push(() => {
        this.complete({ finish: 'stop' })
        this.truth.ended = 'completed'
      })
    } else if (final === 'error') {
      push(() => {
        this.complete({ error: { name: 'APIError', data: { message: 'provider said no' } } })
        this.truth.ended = 'failed'
      })
    } else {
      push(() =>
        this.part({
          type: 'tool',
          state: { status: 'error', error: REFUSED, time: { start: this.now, end: this.now } },
        }),
      )
      push(() => {
        this.complete({ finish: 'tool-calls' })
        this.truth.ended = 'completed'
      })
    }
  }

  private end(): void {
    this.status = 'idle'
    this.over = true
    // What was left of this run never happens; a later job of the session may follow.
    this.events.splice(this.cursor, this.events.length)
    if (this.s.followUp) this.startFollowUp()
  }

  /** A later run of the same session (another job), after this one is over. */
  private startFollowUp(): void {
    this.events.push(
      () => {
        this.messages.push(userMessage('msg_next', this.now))
      },
      () => {
        this.status = 'busy'
      },
      () => {
        this.messages.push({
          info: { id: 'msg_next_a', role: 'assistant', parentID: 'msg_next', time: { created: this.now } },
          parts: [],
        })
      },
      () => {
        const a = this.messages.at(-1) as TurnMessage
        a.info.time.completed = this.now
        a.info.finish = 'stop'
      },
      () => {
        this.status = 'idle'
      },
    )
  }

  abort(): void {
    if (this.over) return
    if (!this.begun) return // lost: the run goes on
    if (this.truth.ended) {
      // Its last answer is already recorded: the abort only ends what is left (idle).
      this.end()
      return
    }
    const open = this.open()
    if (open) {
      if (this.status === 'retry' && open.parts.length === 0) this.complete({})
      else this.complete({ error: { name: 'MessageAbortedError', data: { message: 'Aborted' } } })
    } else {
      this.truth.recordless = true
      const last = this.messages.at(-1)
      this.truth.lastStepFailed =
        last?.info.parentID === JOB_ID &&
        last.parts.some((p) => p.type === 'tool' && (p.state as { error?: string }).error === REFUSED)
    }
    this.asks = 0
    this.truth.ended = 'aborted'
    this.end()
  }

  die(): void {
    if (this.truth.dead) return
    this.truth.dead = true
    // Records stay as they were; a restarted runtime may run later jobs of the session.
    this.asks = 0
    this.end()
  }

  /** Applies `n` runtime events (time passes once they are exhausted). */
  advance(n: number, onInterrupt: (kind: Interrupt) => void): void {
    for (let i = 0; i < n; i++) {
      // An interruption scheduled past the end happens after it (to a run that is over).
      const due =
        this.s.interrupt && (this.s.interrupt.at <= this.cursor || this.cursor >= this.events.length)
      if (!this.interrupted && this.s.interrupt && due) {
        this.interrupted = true
        onInterrupt(this.s.interrupt.kind)
        continue
      }
      const event = this.events[this.cursor]
      if (!event) {
        this.tick(20_000)
        continue
      }
      this.cursor++
      event()
    }
  }

  exhausted(): boolean {
    return this.cursor >= this.events.length && (this.interrupted || !this.s.interrupt)
  }
}

function userMessage(id: string, created: number): TurnMessage {
  return { info: { id, role: 'user', time: { created } }, parts: [{ type: 'text', text: 'do it' }] }
}

const SESSION = { id: SESSION_ID, time: { created: 0, updated: 0 } } as unknown as RuntimeSession

/**
 * A port over the model; each call first lets the runtime move on by the next scheduled count.
 * With `deliveries`, the port also has an event view (`eventStatusOf`) that lags the runtime:
 * at each call the status of that moment reaches the view or not (`true`/`false` in turn), so
 * the view shows a status the session had at some earlier call, or nothing before the first.
 */
function portOver(
  model: ModelRuntime,
  schedule: number[],
  onInterrupt: (kind: Interrupt) => void,
  deliveries?: boolean[],
) {
  let i = 0
  let d = 0
  let viewed: RuntimeStatus | undefined
  const move = () => {
    if (deliveries?.[d++ % deliveries.length]) viewed = model.status
    model.advance(schedule[i++ % schedule.length] ?? 0, onInterrupt)
  }
  const port = {
    ...(deliveries && { eventStatusOf: () => viewed }),
    statusOf: async () => {
      move()
      return model.status
    },
    messages: async () => {
      move()
      return structuredClone(model.messages)
    },
    permissions: async () => {
      move()
      return model.asks > 0 && model.status !== 'idle'
        ? [{ id: 'per_1', sessionID: SESSION_ID, permission: 'bash', patterns: ['ls'] }]
        : []
    },
    questions: async () => [],
    messageDiff: async () => [],
    todos: async () => [],
    waitUntil: async () => undefined,
    abortSession: async () => undefined,
  } as unknown as RuntimePort
  return port
}

const job = { messageId: JOB_ID, startedAt: 0 }

type Reported = JobStatus['status'] | 'not_found'

async function poll(ctx: JobContext): Promise<{ status: Reported; error?: string }> {
  try {
    const out = await jobStatus(ctx, SESSION, job)
    return { status: out.status, ...(out.error && { error: out.error.name }) }
  } catch (error) {
    if ((error as { code?: string }).code === 'not_found') return { status: 'not_found' }
    throw error
  }
}

/** Why a reported terminal state is false, or undefined when it is true. */
function falseTerminal(reported: { status: Reported; error?: string }, truth: Truth): string | undefined {
  const { status, error } = reported
  if (status === 'running' || status === 'input_required') return undefined
  const deadNoEnd = truth.dead && truth.ended === undefined
  // An abort that left no record reads like a dead run (or, after a failed tool call, like a
  // turn that a rejection ended): the runtime's records cannot tell them apart.
  const recordless = truth.ended === 'aborted' && truth.recordless === true && !truth.gatewayCancelled
  if (
    recordless &&
    ((status === 'completed' && truth.lastStepFailed) ||
      (status === 'failed' && error === 'Interrupted' && truth.hasAnswer) ||
      (status === 'cancelled' && !truth.hasAnswer))
  )
    return undefined
  const ok =
    (status === 'completed' && truth.ended === 'completed') ||
    (status === 'failed' && error !== 'Interrupted' && truth.ended === 'failed') ||
    (status === 'failed' && error === 'Interrupted' && deadNoEnd && truth.hasAnswer) ||
    (status === 'cancelled' &&
      (truth.ended === 'aborted' || truth.gatewayCancelled || (deadNoEnd && !truth.hasAnswer))) ||
    (status === 'not_found' && truth.dead && !truth.userStored)
  return ok
    ? undefined
    : `reported ${status}${error ? `/${error}` : ''} but the run is ${JSON.stringify(truth)}`
}

/** The one true terminal state of a run that is over (or dead and quiet past the bound). */
function expectedEnd(truth: Truth): Reported | undefined {
  if (truth.ended === 'aborted' && truth.recordless && !truth.gatewayCancelled)
    return truth.lastStepFailed ? 'completed' : truth.hasAnswer ? 'failed' : 'cancelled'
  if (truth.ended === 'completed') return 'completed'
  if (truth.ended === 'failed') return 'failed'
  if (truth.ended === 'aborted') return 'cancelled'
  if (truth.dead) return !truth.userStored ? 'not_found' : truth.hasAnswer ? 'failed' : 'cancelled'
  return undefined
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  history: fc.boolean(),
  preStore: fc.array(fc.integer({ min: 0, max: 8_000 }), { maxLength: 3 }),
  // At most 6 × 8 s of quiet before the run reads busy: under the 60 s bound, like the runtime.
  lag: fc.array(fc.integer({ min: 0, max: 8_000 }), { maxLength: 6 }),
  assistantBeforeBusy: fc.boolean(),
  steps: fc.array(fc.constantFrom<Step>('tool-ok', 'tool-fail-continue', 'retry', 'ask'), { maxLength: 4 }),
  final: fc.constantFrom<Final>('stop', 'error', 'tool-fail-end'),
  interrupt: fc.option(
    fc.record({
      kind: fc.constantFrom<Interrupt>('abort', 'gateway-cancel', 'death'),
      at: fc.integer({ min: 0, max: 40 }),
    }),
    { nil: undefined },
  ),
  followUp: fc.boolean(),
  busyDeltas: fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 1, maxLength: 4 }),
})

/** How many runtime events happen before each read: mostly none or a few, sometimes many. */
const scheduleArb = fc.array(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 25 })), {
  minLength: 1,
  maxLength: 40,
})

async function runScenario(scenario: Scenario, schedule: number[], deliveries?: boolean[]): Promise<void> {
  const model = new ModelRuntime(scenario)
  let ctx: JobContext | undefined
  const onInterrupt = (kind: Interrupt) => {
    if (kind === 'death') model.die()
    else if (kind === 'abort') model.abort()
    else if (!model.over) {
      // job.cancel: the gateway aborts and remembers it (keepCancelled).
      model.truth.gatewayCancelled = true
      if (ctx) keepCancelled(ctx, SESSION_ID, job, new Set())
      model.abort()
    }
  }
  const port = portOver(model, schedule, onInterrupt, deliveries)
  ctx = jobContext(port, () => model.now)
  // Poll like a client: every answer checked against the truth of that moment.
  for (let i = 0; i < 30; i++) {
    const reported = await poll(ctx)
    const wrong = falseTerminal(reported, model.truth)
    if (wrong) throw new Error(wrong)
    if (reported.status !== 'running' && reported.status !== 'input_required') return
    if (model.exhausted() && model.now > DEAD_AFTER * 3) break
  }
  // The run is over or dead: let it go quiet past the bound; then the true end must be reported.
  while (!model.exhausted()) model.advance(1, onInterrupt)
  model.advance(Math.ceil((DEAD_AFTER * 2) / 20_000), onInterrupt)
  const final = await poll(ctx)
  const wrong = falseTerminal(final, model.truth)
  if (wrong) throw new Error(wrong)
  expect(final.status).toBe(expectedEnd(model.truth))
}

describe('job state over interleavings of runtime events and reads (property)', () => {
  it('never reports a false terminal state, and reports the true end once the run is over', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, scheduleArb, async (scenario, schedule) => {
        await runScenario(scenario, schedule)
      }),
      { numRuns: 3_000 },
    )
  })

  it('the same with an event view lagging the runtime standing in for status reads', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenarioArb,
        scheduleArb,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        async (scenario, schedule, deliveries) => {
          await runScenario(scenario, schedule, deliveries)
        },
      ),
      { numRuns: 3_000 },
    )
  })

  it('the start of a run under load: idle with no answer for up to 50 s is running', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 5_000, max: 8_000 }), { minLength: 4, maxLength: 6 }),
        fc.boolean(),
        async (lag, assistantBeforeBusy) => {
          await runScenario(
            {
              history: false,
              preStore: [],
              lag,
              assistantBeforeBusy,
              steps: [],
              final: 'stop',
              interrupt: undefined,
              followUp: false,
              busyDeltas: [100],
            },
            [1],
          )
        },
      ),
      { numRuns: 200 },
    )
  })
})
