import type { Client } from '@modelcontextprotocol/client'
import { freePort, step, waitFor } from '@sallyport/testkit'
import { describe, expect, it } from 'vitest'
import { type LiveCli, runCli } from './cli-process.ts'
import {
  type LogLine,
  logLines,
  mcpClient,
  modelForFile,
  newScriptedStack,
  type Stops,
  startReady,
  upScriptedStack,
} from './stack-fixture.ts'

// MCP 2026-07-28 input_required rounds across two gateway PROCESSES that share only the stack's
// secret files: `sallyport up` serves the round (an agent question as a form), a second
// `sallyport serve` on the same stack directory serves the retry with the answer, and the job
// completes. Nothing is kept between rounds but what the sealed requestState carries.

const stops: Stops = []
const model = modelForFile(stops)

/** `sallyport serve` on the stack directory, on its own port, once it logged `ready`. */
async function serveStack(dir: string): Promise<{ cli: LiveCli; mcpUrl: string }> {
  const port = await freePort()
  const { cli, ready } = await startReady(['serve', '--dir', dir, '--port', String(port)], stops, 30_000)
  return { cli, mcpUrl: String(ready.mcpUrl) }
}

const callRaw = async (client: Client, args: Record<string, unknown>, retry?: Record<string, unknown>) =>
  (await client.callTool(
    { name: 'gateway.agent.run', arguments: args, ...retry } as never,
    {
      allowInputRequired: true,
    } as never,
  )) as Record<string, unknown>

const roundLines = (stdout: string): LogLine[] =>
  logLines(stdout).filter((l) => l.event === 'audit' && l.tool === 'gateway.agent.run' && 'inputRound' in l)

describe('input_required rounds across gateway processes (built CLI, real runtime)', () => {
  it('one process asks the form, another serves the answer, the job completes', async () => {
    const dir = await newScriptedStack(model, stops)
    const up = await upScriptedStack(dir, stops)
    const added = await runCli(['credential', 'add', 'dialogs', 'full', '--dir', dir])
    expect(added.code, added.stderr).toBe(0)
    const key = added.stdout.trim()
    const other = await serveStack(dir)
    const here = await mcpClient(String(up.ready.mcpUrl), key, { manual: true })
    const there = await mcpClient(other.mcpUrl, key, { manual: true })
    stops.push(async () => {
      await here.close()
      await there.close()
    })

    const marker = model.script([
      step.question({
        question: 'Deploy where?',
        header: 'Target',
        options: [
          { label: 'staging', description: 'safe' },
          { label: 'prod', description: 'live' },
        ],
      }),
      (req) => ({ text: `target: ${/staging|prod/.exec(req.toolResults.join(' '))?.[0] ?? 'none'}` }),
    ])
    const args = { message: `deploy ${marker}`, waitMs: 25_000 }
    const round = await callRaw(here, args)
    expect(round.resultType).toBe('input_required')
    const inputRequests = round.inputRequests as Record<string, { params: { message: string } }>
    expect(Object.keys(inputRequests)).toEqual(['q1.1'])
    expect(inputRequests['q1.1']?.params.message).toBe('Deploy where?')

    const done = await callRaw(there, args, {
      requestState: round.requestState,
      inputResponses: { 'q1.1': { action: 'accept', content: { answer: 'staging' } } },
    })
    expect(done.isError ?? false).toBe(false)
    expect(done.structuredContent).toMatchObject({ status: 'completed', text: 'target: staging' })

    // Each process logged its own round; neither logged the state or the answer.
    const asked = await waitFor(() => roundLines(up.cli.stdout()).at(-1))
    expect(asked).toMatchObject({ inputRound: 0, inputAsked: 1, outcome: 'ok' })
    const answered = await waitFor(() => roundLines(other.cli.stdout()).at(-1))
    expect(answered).toMatchObject({ inputRound: 1, inputAnswered: 1, outcome: 'ok' })
    for (const out of [up.cli.stdout(), other.cli.stdout()]) {
      expect(out).not.toContain(String(round.requestState))
      expect(out).not.toContain(key)
    }
  })
})
