import { expect, it } from 'vitest'
import type { Gateway } from '../../src/index.js'
import { postRpc, rpcCall, useHarness } from './harness.js'

// Closing the gateway (SIGTERM in `up` and `serve`) while calls wait: each waiting call answers
// with the job's state as it stands, and its audit line says `ok`, instead of the connection
// being cut under it (found by the black-box review: clients got "terminated", the audit line
// said `aborted`, which means the client left).

const h = useHarness()

/** The JSON-RPC answer in a response body (plain JSON or one SSE event). */
function answerOf(text: string): { result?: { structuredContent?: Record<string, unknown> } } {
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}')
  return JSON.parse(data)
}

async function post(g: Gateway, key: string, id: number, name: string, args: Record<string, unknown>) {
  const { status, text } = await postRpc(g, key, rpcCall(id, name, args))
  return { status, answer: answerOf(text) }
}

it('answers every waiting call with the state as it stands when the gateway closes, then closes', async () => {
  const g = h.extraGateway({})
  const run = await post(g, h.creds.keys.chat, 1, 'gateway.agent.run', {
    message: 'still going',
    waitMs: 0,
  })
  const job = run.answer.result?.structuredContent?.job
  expect(typeof job).toBe('string')
  const mark = h.logs.lines().length
  const waits = Array.from({ length: 5 }, (_, i) =>
    post(g, h.creds.keys.chat, 10 + i, 'gateway.job.get', { job, waitMs: 30_000 }),
  )
  // Let every wait reach the runtime before the gateway closes.
  await new Promise((r) => setTimeout(r, 500))
  const t0 = performance.now()
  await g.close()
  const closedIn = performance.now() - t0
  const answers = await Promise.all(waits)
  for (const a of answers) {
    expect(a.status).toBe(200)
    expect(a.answer.result?.structuredContent).toMatchObject({ status: 'running' })
  }
  // Well within the 30 s waits: the close did not wait them out.
  expect(closedIn).toBeLessThan(10_000)
  const audit = h.logs
    .lines()
    .slice(mark)
    .filter((l) => l.event === 'audit' && l.tool === 'gateway.job.get')
  expect(audit.map((l) => l.outcome)).toEqual(Array(5).fill('ok'))
})
