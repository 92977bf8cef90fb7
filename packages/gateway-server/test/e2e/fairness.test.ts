import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectTo, type E2E, type McpSession, startE2E } from './harness.js'

// Fairness under a storm, with the real runtime: one chat credential floods the gateway (300
// parallel waits on one slow job, 40 loops starting runs with agent.run as fast as its limits
// let them, oversized batches of agent.run, a tight loop of calls) from another process, while
// the owner's workflow is timed, once a second, for as long as the storm starts runs. The
// median of the owner's latency must stay within 2x of the same workflow measured quietly in
// this run (a ratio, not a timing). Without the run limits (concurrentRuns 40, runBurst 1 000)
// it was 3.57x; with them, 0.90–1.62x in 10 runs, 1.43x and 1.15x in two fresh clones (the storm's
// first seconds alone, printed as firstSecondsRatio: about 1.3–1.6x).

let e2e: E2E
let owner: McpSession
let chat: McpSession

beforeAll(async () => {
  e2e = await startE2E()
  owner = await e2e.connect(e2e.creds.keys.full, 'legacy')
  chat = await e2e.connect(e2e.creds.keys.chat, 'legacy')
}, 90_000)

afterAll(async () => {
  for (const c of [owner, chat]) await c?.close().catch(() => undefined)
  await e2e?.stop()
})

/** One owner workflow: a run that completes, its session read, the catalog. */
async function ownerWorkflow(i: number): Promise<number> {
  const t0 = performance.now()
  const run = await owner.call('gateway.agent.run', { message: `quick ${i}`, waitMs: 20_000 })
  expect(run.structured.status, run.text).toBe('completed')
  const got = await owner.call('gateway.session.get', { session: run.structured.session })
  expect(got.isError).toBe(false)
  expect((await owner.call('gateway.catalog.get')).isError).toBe(false)
  return performance.now() - t0
}

/** How long the storm lasts. */
const STORM_SECONDS = 15

/**
 * One owner workflow, then the rest of a second: the owner works at a person's pace (one run a
 * second, within its own run allowance), for as long as the measure needs.
 */
async function pacedWorkflow(i: number): Promise<number> {
  const ms = await ownerWorkflow(i)
  if (ms < 1000) await new Promise((r) => setTimeout(r, 1000 - ms))
  return ms
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}

// The storm runs in its own process so its client work does not share the gateway's event loop.
// It opens a new connection for every request: a client this starved (lowest priority on a busy
// machine) reuses idle keep-alive connections after the gateway's idle timeout has closed them,
// and that race of HTTP/1.1 keep-alive (the request meets the closing connection: "other side
// closed" before the gateway saw a byte of it) is not what this test measures. Any network error
// left is then the gateway's doing.
const STORM = `
const http = require('node:http')
const [url, key, job, seconds] = process.argv.slice(2)
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  authorization: 'Bearer ' + key,
  connection: 'close',
}
const counts = {}
const request = (body) =>
  new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve({ status: res.statusCode, text }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
const post = async (body, kind) => {
  const t0 = Date.now()
  try {
    const res = await request(JSON.stringify(body))
    const code = res.status !== 200 ? 'http_' + res.status
      : ['rate_limited', 'upstream_unavailable', 'internal'].find((c) => res.text.includes(c)) ?? 'ok'
    counts[code] = (counts[code] ?? 0) + 1
    return code
  } catch (e) {
    counts.network = (counts.network ?? 0) + 1
    // Which failure, so a failing run says why (ECONNRESET, EPIPE, ...).
    const why = 'network_' + kind + '_' + String(e.code ?? e.message).slice(0, 60) + '_after_' + Math.round((Date.now() - t0) / 1000) + 's'
    counts[why] = (counts[why] ?? 0) + 1
  }
}
const call = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
const until = Date.now() + Number(seconds) * 1000
const waits = Array.from({ length: 300 }, (_, i) => post(call(i, 'gateway.job.get', { job, waitMs: 25000 }), 'wait'))
// Runs started as fast as the limits let them (the runtime's work on runs is what one credential
// could otherwise take from the others): a refused one is sent again after 300 ms.
let n = 0
const runs = Array.from({ length: 40 }, async (_, k) => {
  while (Date.now() < until) {
    const code = await post(call(1, 'gateway.agent.run', { message: 'storm run ' + k + ' ' + (n++), waitMs: 20000 }), 'run')
    if (code === 'ok') counts.runs = (counts.runs ?? 0) + 1
    else await new Promise((r) => setTimeout(r, 300))
  }
})
const loops = Array.from({ length: 8 }, async (_, k) => {
  while (Date.now() < until) {
    await post(Array.from({ length: 100 }, (_, i) => call(i, 'gateway.agent.run', { message: 'storm ' + k + ' ' + i, waitMs: 0 })), 'batch')
    await post(call(1, 'gateway.session.list', {}), 'list')
    await post(call(2, 'gateway.job.get', { job, waitMs: 0 }), 'get')
  }
})
Promise.all([...waits, ...runs, ...loops]).then(() => {
  process.stdout.write(JSON.stringify(counts))
})
`

describe('one credential cannot take the gateway away from another', () => {
  it('keeps the owner’s workflow within 2x of its quiet latency during a storm from a chat credential', async () => {
    // A slow job of the chat credential for the storm's waits: 60 s of streaming, running through
    // both the quiet and the stormy measurement (a job running is not the storm).
    const marker = e2e.stack.model.script([
      { text: Array.from({ length: 120 }, () => 'tick '), intervalMs: 500 },
    ])
    const slow = await chat.call('gateway.agent.run', { message: `slow ${marker}`, waitMs: 0 })
    expect(slow.structured.status).toBe('running')
    // Warm-up (the runtime's first runs are slower), then the quiet figure.
    for (let i = 0; i < 3; i++) await ownerWorkflow(-1 - i)
    let i = 0
    const quiet: number[] = []
    while (quiet.length < 5) quiet.push(await pacedWorkflow(i++))
    const sessionsBefore = (await e2e.upstream.listSessions({ roots: true })).length

    const script = join(e2e.creds.stateDir, 'storm.cjs')
    await writeFile(script, STORM)
    // At the lowest CPU priority: the storm stands for remote clients, whose own work is not
    // this machine's; what it costs the gateway and the runtime is what is measured.
    const child = spawn(
      'nice',
      [
        '-n',
        '19',
        process.execPath,
        script,
        `${e2e.url}/mcp`,
        e2e.creds.keys.chat,
        String(slow.structured.job),
        String(STORM_SECONDS),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    // The owner's workflow, timed for as long as the storm starts runs: its first seconds (the
    // storm's burst of runs) and what follows. (Its last waits go on afterwards, until they time
    // out or the slow job ends.)
    const stormy: number[] = []
    const stormEnds = performance.now() + STORM_SECONDS * 1000
    while (performance.now() < stormEnds) stormy.push(await pacedWorkflow(i++))
    await exited
    const counts = JSON.parse(out || '{}') as Record<string, number>
    const sessionsAfter = (await e2e.upstream.listSessions({ roots: true })).length
    // Quiet again (the slow job still streaming): the quiet figure is taken on both sides.
    const runsInStorm = stormy.length
    while (quiet.length < 10) quiet.push(await pacedWorkflow(i++))

    const ratio = median(stormy) / median(quiet)
    process.stdout.write(
      JSON.stringify({
        quietMs: quiet.map(Math.round),
        stormMs: stormy.map(Math.round),
        ratio,
        // The storm's first seconds alone (not asserted: a view of its burst of runs).
        firstSecondsRatio: median(stormy.slice(0, 5)) / median(quiet),
        storm: counts,
      }) + '\n',
    )
    expect(ratio).toBeLessThan(2)
    // The storm was refused by limits, not by failures: no upstream_unavailable, no network
    // errors.
    // Refused as rate_limited: in a JSON-RPC answer, or as HTTP 429 before its body was read (a
    // loaded machine reads the 300 waits' bodies slowly, so all of them may be refused that way).
    expect((counts.rate_limited ?? 0) + (counts.http_429 ?? 0), JSON.stringify(counts)).toBeGreaterThan(0)
    expect(counts.upstream_unavailable ?? 0, JSON.stringify(counts)).toBe(0)
    expect(counts.network ?? 0, JSON.stringify(counts)).toBe(0)
    // Its oversized batches were refused before any call ran: 400 (batch too large) or, when the
    // credential already had too many request bodies in flight (a loaded machine reads the 300
    // waits' bodies slowly), 429 before the batch was read at all.
    expect((counts.http_400 ?? 0) + (counts.http_429 ?? 0)).toBeGreaterThan(0)
    // The storm did start runs (its allowance), and only those: every session made while it
    // lasted is one of the owner's runs or one of the storm's runs that answered.
    expect(counts.runs ?? 0, JSON.stringify(counts)).toBeGreaterThan(0)
    expect(sessionsAfter - sessionsBefore).toBe(runsInStorm + (counts.runs ?? 0))
  }, 180_000)

  it("counts what the real runtime streams for a run: a run of 1 500 chunks at once holds back the credential's next run, quick runs do not", async () => {
    const extra = await e2e.extraGateway({ limits: { runEventsPerSecond: 1, runEventBurst: 1_000 } })
    const chatter = await connectTo(e2e, extra.url, e2e.creds.keys.chat)
    const other = await connectTo(e2e, extra.url, e2e.creds.keys.full)
    try {
      // Quick runs (a short default answer: one step, a few dozen small events) cost about 150.
      for (const i of [0, 1]) {
        const quick = await chatter.call('gateway.agent.run', { message: `quick ${i}`, waitMs: 20_000 })
        expect(quick.structured.status, quick.text).toBe('completed')
      }
      const burst = e2e.stack.model.script(
        [{ text: Array.from({ length: 1_500 }, (_, i) => `chunk${i} `), intervalMs: 0 }],
        'fast-stream',
      )
      const streamed = await chatter.call('gateway.agent.run', { message: `stream ${burst}`, waitMs: 20_000 })
      expect(streamed.structured.status, streamed.text).toBe('completed')
      const next = await chatter.call('gateway.agent.run', { message: 'one more', waitMs: 0 })
      expect(next.isError, next.text).toBe(true)
      expect(next.structured).toMatchObject({ error: { code: 'rate_limited' } })
      expect(next.text).toMatch(/runtime events a second/)
      // Another credential is not held back.
      const own = await other.call('gateway.agent.run', { message: 'owner quick', waitMs: 20_000 })
      expect(own.structured.status, own.text).toBe('completed')
    } finally {
      await Promise.all([chatter.close(), other.close()])
      await extra.close()
    }
  }, 120_000)
})
