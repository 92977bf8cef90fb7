import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { ScriptEntry } from '@sallyport/testkit'
import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runtimeFromUpstream } from '../../src/index.js'
import { connectTo, type E2E, type McpSession, startE2E } from './harness.js'

// Issue 10 against the real runtime. Finding 1: with the CPU busy, fresh MCP clients each run a
// job and follow it to its end; no client may ever see a terminal state that is not the run's
// true end (the runtime takes seconds to begin a run under load, and retries provider errors).
// Finding 4: 300 clients waiting on one slow job share the gateway's reads of the runtime.
//
// Honest note: on this machine the first test did NOT fail against the code before the fix (3
// runs, 0 false states; the review's false states came from a bigger load). The failing-first
// evidence for finding 1 is the property test (src/jobs/job-state.property.test.ts: 897 of 3 000
// scenarios false on the old code). The waiter test did fail before the fix: 1 853 message reads
// for 36 events (51 per event), 32 s for the 300 waits, and 5 waits failed in one run.

let e2e: E2E
/** Every request the gateway sent the runtime: path, method, time. */
const upstreamRequests: Array<{ method: string; path: string; at: number }> = []
let counting: UpstreamClient
let gatewayUrl: string

beforeAll(async () => {
  e2e = await startE2E()
  const countingFetch: typeof fetch = (input, init) => {
    const request = input instanceof Request ? input : undefined
    const url = new URL(request ? request.url : String(input))
    upstreamRequests.push({
      method: request?.method ?? init?.method ?? 'GET',
      path: url.pathname,
      at: Date.now(),
    })
    return fetch(input, init)
  }
  counting = createUpstreamClient({
    baseUrl: e2e.stack.runtime.url,
    username: e2e.stack.runtime.username,
    password: e2e.stack.runtime.password,
    directory: e2e.stack.runtime.directory,
    fetch: countingFetch,
  })
  // The per-credential limits are not under test here: lifted, so every call reaches the jobs.
  const gateway = await e2e.extraGateway({
    runtime: runtimeFromUpstream(counting),
    limits: {
      ratePerSecond: 10_000,
      rateBurst: 10_000,
      concurrentWaits: 1_000,
      concurrentRuns: 100,
      runsPerMinute: 1_000_000,
      runBurst: 10_000,
      maxInFlightBodies: 1_000,
      // 300 waiters of one credential post at once: on a loaded machine their bodies are read
      // slowly, so more than the default 16 are in flight (what this file measures is not that).
      maxInFlightBodiesPerCredential: 1_000,
      maxConnections: 2_000,
    },
  })
  gatewayUrl = gateway.url
}, 120_000)

afterAll(async () => {
  counting?.close()
  await e2e?.stop()
})

/** Keeps every core busy (twice over) until stopped. */
function burnCpu(): { stop(): Promise<void> } {
  const workers = Array.from(
    { length: availableParallelism() * 2 },
    () => new Worker('const end = Date.now() + 600000; while (Date.now() < end) {}', { eval: true }),
  )
  return {
    async stop() {
      await Promise.all(workers.map((w) => w.terminate()))
    },
  }
}

/** Measured figures go to the test output (for the README and the issue). */
function report(line: string): void {
  process.stdout.write(`${line}\n`)
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled'])

/** `running ×12 → completed` */
function compact(seen: string[]): string {
  const runs: string[] = []
  for (let i = 0; i < seen.length; ) {
    let j = i
    while (j < seen.length && seen[j] === seen[i]) j++
    runs.push(j - i > 1 ? `${seen[i]} ×${j - i}` : (seen[i] as string))
    i = j
  }
  return runs.join(' → ')
}

interface Followed {
  kind: string
  seen: string[]
  final: Record<string, unknown>
  ms: number
}

/**
 * One fresh client: agent.run with waitMs, then job.get until the job ends; answers an ask once.
 * Records every status it was told.
 */
async function follow(
  key: string,
  kind: string,
  marker: string,
  answer: (client: McpSession, interaction: Record<string, unknown>) => Promise<void>,
  poll: boolean,
): Promise<Followed> {
  const t0 = performance.now()
  const client = await connectTo(e2e, gatewayUrl, key)
  const seen: string[] = []
  try {
    let out = await client.call('gateway.agent.run', {
      message: `${kind} ${marker}`,
      waitMs: poll ? 500 : 5_000,
    })
    const job = out.structured.job as string
    const deadline = Date.now() + 170_000
    for (;;) {
      // A tool error is recorded, not thrown: every client's story is printed before any check.
      if (out.isError) {
        seen.push(`error ${out.text}`)
        break
      }
      const status = out.structured.status as string
      seen.push(status)
      if (TERMINAL.has(status) || Date.now() > deadline) break
      if (status === 'input_required') {
        const [interaction] = out.structured.interactions as Array<Record<string, unknown>>
        await answer(client, interaction as Record<string, unknown>)
      }
      // Half the clients poll without waiting (many reads at every moment of the run), half wait.
      if (poll) await new Promise((resolve) => setTimeout(resolve, 100))
      out = await client.call('gateway.job.get', { job, waitMs: poll ? 0 : 10_000 })
    }
    return {
      kind,
      seen,
      final: out.isError ? { status: 'tool error' } : out.structured,
      ms: performance.now() - t0,
    }
  } finally {
    await client.close().catch(() => undefined)
  }
}

describe('job states with the CPU busy (finding 1)', () => {
  it('15 fresh clients each follow their job to its true end: no false terminal state', async () => {
    const model = e2e.stack.model
    const { chat, full } = e2e.creds.keys
    type Answer = (client: McpSession, interaction: Record<string, unknown>) => Promise<void>
    const noAnswer: Answer = async () => undefined
    const plans: Array<{
      kind: string
      key: string
      steps: ScriptEntry[]
      expected: string
      answer: Answer
    }> = []
    for (let i = 0; i < 9; i++) {
      // Some answer at once, some take a few seconds (the run is busy between the chunks).
      const slow = i % 3 === 0
      plans.push({
        kind: `text-${i}`,
        key: chat,
        steps: [
          slow
            ? { text: ['part one, ', `answer ${i}`], delayMs: 1_500, intervalMs: 1_500 }
            : { text: `answer ${i}` },
        ],
        expected: slow ? `part one, answer ${i}` : `answer ${i}`,
        answer: noAnswer,
      })
    }
    for (let i = 0; i < 2; i++) {
      // FAIL500: the provider fails once with a retryable error; the runtime retries after ~2 s.
      let failed = false
      plans.push({
        kind: `retry-${i}`,
        key: chat,
        steps: [
          () => {
            if (failed) return { text: `retried ${i}` }
            failed = true
            return { error: { status: 500, type: 'server_error', message: 'scripted outage' } }
          },
        ],
        expected: `retried ${i}`,
        answer: noAnswer,
      })
    }
    for (let i = 0; i < 2; i++) {
      plans.push({
        kind: `question-${i}`,
        key: chat,
        steps: [
          {
            toolCall: {
              name: 'question',
              input: {
                questions: [
                  {
                    question: 'Which colour?',
                    header: 'Colour',
                    options: [
                      { label: 'Blue', description: 'cool' },
                      { label: 'Red', description: 'warm' },
                    ],
                  },
                ],
              },
            },
          },
          (req) => ({ text: `colour ${req.toolResults.join(' ').includes('Blue') ? 'Blue' : 'other'} ${i}` }),
        ],
        expected: `colour Blue ${i}`,
        answer: async (client, interaction) => {
          const ok = await client.call('gateway.interaction.respond', {
            interaction: interaction.interaction,
            answers: [['Blue']],
          })
          expect(ok.structured).toEqual({ accepted: true, kind: 'question' })
        },
      })
    }
    for (let i = 0; i < 2; i++) {
      plans.push({
        kind: `permission-${i}`,
        key: full,
        steps: [
          { toolCall: { name: 'bash', input: { command: `echo approved-${i}`, description: 'echo' } } },
          (req) => ({ text: `ran ${req.toolResults.join('').includes(`approved-${i}`) ? 'ok' : 'no'} ${i}` }),
        ],
        expected: `ran ok ${i}`,
        answer: async (client, interaction) => {
          expect(interaction.kind).toBe('permission')
          const ok = await client.call('gateway.interaction.respond', {
            interaction: interaction.interaction,
            decision: 'once',
          })
          expect(ok.structured).toEqual({ accepted: true, kind: 'permission' })
        },
      })
    }
    expect(plans).toHaveLength(15)

    const cpu = burnCpu()
    let results: Followed[]
    try {
      results = await Promise.all(
        plans.map((plan, i) =>
          follow(plan.key, plan.kind, model.script(plan.steps), plan.answer, i % 2 === 0),
        ),
      )
    } finally {
      await cpu.stop()
    }
    const lines = results.map((r) => `${r.kind}: ${compact(r.seen)} (${Math.round(r.ms)} ms)`)
    report(`[job-states-under-load] ${lines.join('\n')}`)
    const falseEnds = results.filter((r) => r.final.status !== 'completed')
    expect(
      falseEnds.map((r) => `${r.kind}: ${compact(r.seen)} ${JSON.stringify(r.final.error ?? '')}`),
    ).toEqual([])
    results.forEach((r, i) => {
      expect(r.final.text, r.kind).toBe(plans[i]?.expected)
      // Every status before the last one is non-terminal: nothing ended early and came back.
      expect(
        r.seen.slice(0, -1).every((s) => s === 'running' || s === 'input_required'),
        r.kind,
      ).toBe(true)
    })
    for (const r of results.filter((r) => /^(question|permission)/.test(r.kind)))
      expect(r.seen, r.kind).toContain('input_required')
  }, 240_000)
})

describe('a cancel sent right after the start (the runtime loses an abort before a run begins)', () => {
  it('every job cancelled at once ends cancelled, and no answer is completed', async () => {
    const model = e2e.stack.model
    const cpu = burnCpu()
    let outcomes: Array<{ cancel: string; final: string; seen: string[]; session: string; end: string }>
    try {
      outcomes = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const client = await connectTo(e2e, gatewayUrl, e2e.creds.keys.chat)
          try {
            const marker = model.script([{ text: `must not complete ${i}`, delayMs: 4_000 }])
            const run = await client.call('gateway.agent.run', { message: `cancel me ${marker}`, waitMs: 0 })
            const job = run.structured.job as string
            const cancel = await client.call('gateway.job.cancel', { job })
            const seen: string[] = []
            let out = await client.call('gateway.job.get', { job, waitMs: 10_000 })
            seen.push(out.structured.status as string)
            const deadline = Date.now() + 60_000
            while (!TERMINAL.has(out.structured.status as string) && Date.now() < deadline) {
              out = await client.call('gateway.job.get', { job, waitMs: 10_000 })
              seen.push(out.structured.status as string)
            }
            return {
              cancel: (cancel.structured.status ?? cancel.text) as string,
              final: out.structured.status as string,
              seen,
              session: run.structured.session as string,
              // What the job ended with, for the failure message (error, answer).
              end: JSON.stringify({ error: out.structured.error, text: out.structured.text }),
            }
          } finally {
            await client.close().catch(() => undefined)
          }
        }),
      )
    } finally {
      await cpu.stop()
    }
    report(
      `[job-states-under-load] cancel at once: ${JSON.stringify(outcomes.map((o) => [o.cancel, ...o.seen]))}`,
    )
    const story = JSON.stringify(outcomes.map((o) => [o.cancel, ...o.seen, o.end]))
    expect(
      outcomes.map((o) => o.cancel),
      story,
    ).toEqual(outcomes.map(() => 'cancelled'))
    expect(
      outcomes.map((o) => o.final),
      story,
    ).toEqual(outcomes.map(() => 'cancelled'))
    // Give a lost abort the time to show: the model's answer (4 s) must never be completed.
    await new Promise((resolve) => setTimeout(resolve, 6_000))
    const completedAnswers = model.requests.filter(
      (r) =>
        r.kind === 'chat' && JSON.stringify(r.body ?? {}).includes('cancel me') && r.outcome === 'completed',
    )
    expect(completedAnswers).toHaveLength(0)
  }, 180_000)
})

describe('a cancel answered `cancelled` is final (review: the run went on and completed)', () => {
  it.each([0, 200, 1_000])(
    'answer delayed %i ms: every job whose cancel said cancelled ends cancelled; the others really finished first',
    async (delayMs) => {
      const model = e2e.stack.model
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const client = await connectTo(e2e, gatewayUrl, e2e.creds.keys.chat)
          try {
            const marker = model.script([{ text: `DONE ${i}`, delayMs }])
            const run = await client.call('gateway.agent.run', { message: `stop me ${marker}`, waitMs: 0 })
            const job = run.structured.job as string
            const cancel = await client.call('gateway.job.cancel', { job })
            // Long enough for a lost abort to show: the answer comes within a second or two.
            let out = await client.call('gateway.job.get', { job, waitMs: 15_000 })
            const deadline = Date.now() + 30_000
            while (!TERMINAL.has(out.structured.status as string) && Date.now() < deadline)
              out = await client.call('gateway.job.get', { job, waitMs: 10_000 })
            await new Promise((resolve) => setTimeout(resolve, delayMs + 1_500))
            const later = await client.call('gateway.job.get', { job })
            return {
              cancel: (cancel.isError
                ? (cancel.structured.error as { code: string }).code
                : cancel.structured.status) as string,
              final: out.structured.status as string,
              later: later.structured.status as string,
              text: later.structured.text,
            }
          } finally {
            await client.close().catch(() => undefined)
          }
        }),
      )
      report(`[job-states-under-load] cancel vs ${delayMs} ms answer: ${JSON.stringify(outcomes)}`)
      for (const o of outcomes) {
        if (o.cancel === 'cancelled')
          expect([o.final, o.later], JSON.stringify(o)).toEqual(['cancelled', 'cancelled'])
        else {
          // Refused only because the run had already ended on its own, and then it says so.
          expect(o.cancel, JSON.stringify(o)).toBe('not_pending')
          expect(o.later, JSON.stringify(o)).toBe('completed')
        }
      }
    },
    120_000,
  )
})

describe('300 waiters on one slow job (finding 4)', () => {
  it('all succeed, and the runtime sees about one read per change, not one per waiter', async () => {
    const model = e2e.stack.model
    const { full, chat } = e2e.creds.keys
    const owner = await connectTo(e2e, gatewayUrl, full)
    // Five steps a second apart: each is a change of the job the waiters are woken for.
    const steps: ScriptEntry[] = [
      ...Array.from({ length: 5 }, (_, i) => ({
        toolCall: {
          name: 'todowrite',
          input: { todos: [{ content: `step ${i}`, status: 'completed', priority: 'low' }] },
        },
        delayMs: 1_000,
      })),
      { text: 'slow job done', delayMs: 1_000 },
    ]
    const title = `slow-${Date.now()}`
    const run = await owner.call('gateway.agent.run', {
      message: `slow ${model.script(steps)}`,
      title,
      waitMs: 0,
    })
    expect(run.isError, run.text).toBe(false)
    const job = run.structured.job as string
    const [session] = await e2e.upstream.listSessions({ search: title })
    const sessionId = session?.id as string

    // The runtime's events of that session the waiters may be woken for.
    const relevant = new Set([
      'session.status',
      'session.idle',
      'session.error',
      'message.updated',
      'permission.asked',
      'permission.replied',
      'question.asked',
      'question.replied',
    ])
    let events = 0
    const off = counting.events.onEvent((event) => {
      const sid = (event.properties as { sessionID?: unknown } | undefined)?.sessionID
      if (sid === sessionId && relevant.has(event.type)) events++
    })

    const clients = await Promise.all(Array.from({ length: 10 }, () => connectTo(e2e, gatewayUrl, full)))
    const mark = upstreamRequests.length
    const t0 = performance.now()
    // While the storm goes on, another credential's quick job is timed.
    const bystander = (async () => {
      const quick = await connectTo(e2e, gatewayUrl, chat)
      const b0 = performance.now()
      const out = await quick.call('gateway.agent.run', {
        message: `quick ${model.script([{ text: 'quick' }])}`,
        waitMs: 20_000,
      })
      const ms = performance.now() - b0
      await quick.close()
      return { out, ms }
    })()
    const waits = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        (clients[i % clients.length] as McpSession).call('gateway.job.get', { job, waitMs: 30_000 }),
      ),
    )
    const ms = performance.now() - t0
    off()
    const quick = await bystander
    for (const c of [owner, ...clients]) await c.close().catch(() => undefined)

    const during = upstreamRequests
      .slice(mark)
      .filter((r) => r.path.includes(sessionId) || r.path === '/session/status')
    const count = (test: (r: { method: string; path: string }) => boolean) => during.filter(test).length
    const statusReads = count((r) => r.path === '/session/status')
    const messageReads = count((r) => r.path === `/session/${sessionId}/message` && r.method === 'GET')
    const ownership = count((r) => r.path === `/session/${sessionId}` && r.method === 'GET')
    const summary = {
      waiters: waits.length,
      wallMs: Math.round(ms),
      relevantEvents: events,
      statusReads,
      messageReads,
      ownershipReads: ownership,
      readsPerEvent: Math.round((messageReads / Math.max(1, events)) * 100) / 100,
      bystanderRunMs: Math.round(quick.ms),
    }
    report(`[job-states-under-load] 300 waiters: ${JSON.stringify(summary)}`)
    const failures = waits.filter((w) => w.isError || w.structured.status !== 'completed')
    expect(failures.map((f) => f.text.slice(0, 200))).toEqual([])
    expect(new Set(waits.map((w) => w.structured.text))).toEqual(new Set(['slow job done']))
    expect(quick.out.structured.status, quick.out.text).toBe('completed')

    // Each waiter's own first look may read (they arrive over time, a read is shared only while
    // in flight); after that, reads follow the changes: well below one read per waiter per event.
    expect(messageReads).toBeLessThan(300 + 3 * (events + 2))
    expect(messageReads).toBeLessThan(waits.length * Math.max(1, events) * 0.1)
  }, 180_000)
})
