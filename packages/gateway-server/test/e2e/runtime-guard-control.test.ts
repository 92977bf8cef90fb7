import { join } from 'node:path'
import { step } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildHostileWorkspace, type HostileWorkspace, runScript } from './agent-tools.js'
import { type E2E, type McpSession, startE2E } from './harness.js'

// The control for runtime-guard.test.ts: the same hostile workspace and the same calls against a
// runtime started WITHOUT the runtime guard plugin (profiles unchanged). The holes the security
// review found are all there, so the guarded suite's "no secret reached the model" can fail.

let e2e: E2E
let ws: HostileWorkspace
let read: McpSession
let full: McpSession

beforeAll(async () => {
  e2e = await startE2E({ runtime: { runtimeGuard: false } })
  ws = buildHostileWorkspace(e2e)
  read = await e2e.connect(e2e.creds.keys.read, 'auto')
  full = await e2e.connect(e2e.creds.keys.full, 'auto')
}, 90_000)

afterAll(async () => {
  for (const c of [read, full]) await c?.close().catch(() => undefined)
  await e2e?.stop()
})

describe('control: without the runtime guard the review findings reproduce', () => {
  it.each([
    ['notes.txt', 'a symlink to the stack state returns the owner key'],
    ['environ', 'a symlink to /proc/self/environ returns the native server password'],
    ['hard.txt', 'a hard link returns a file from outside'],
    ['rootlink/config.yml', 'a directory symlink out of the workspace returns an outside file'],
  ])('%s: %s', async (entry) => {
    const run = await runScript(e2e, read, [step.read(join(ws.root, entry)), step.text('done')])
    expect(run.final.structured.status).toBe('completed')
    expect(run.sentToModel).toContain(ws.secrets.get(entry))
  })

  it('an ordinary read loads a planted AGENTS.md that links to the owner key', async () => {
    const run = await runScript(e2e, read, [step.read(join(ws.root, 'r1/deep/c.txt')), step.text('done')])
    expect(run.final.structured.status).toBe('completed')
    expect(run.sentToModel).toContain(ws.riders.get('r1/deep/c.txt'))
  })

  it('a mixed-case secret name slips past the permission patterns', async () => {
    const run = await runScript(e2e, read, [step.read(join(ws.root, 'Server.Key')), step.text('done')])
    expect(run.final.structured.status).toBe('completed')
    expect(run.sentToModel).toContain(ws.secrets.get('Server.Key'))
  })

  it('an approved env prints the native server password', async () => {
    const run = await runScript(e2e, full, [step.bash('env'), step.text('done')])
    expect(run.final.structured.status).toBe('input_required')
    const ask = (run.final.structured.interactions as Array<{ interaction: string }>)[0]
    await full.call('gateway.interaction.respond', { interaction: ask?.interaction, decision: 'once' })
    let out = await full.call('gateway.job.get', { job: run.final.structured.job, waitMs: 20_000 })
    while (out.structured.status === 'running')
      out = await full.call('gateway.job.get', { job: run.final.structured.job, waitMs: 10_000 })
    const sent = JSON.stringify(
      e2e.stack.model.requestsFor(run.requests[0]?.scriptId ?? '').map((r) => r.body?.messages),
    )
    expect(sent).toContain(`OPENCODE_SERVER_PASSWORD=${e2e.stack.runtime.password}`)
  })
})
