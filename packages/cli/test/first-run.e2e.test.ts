import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import { freePort, waitFor } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BIN, cliEnv, runCli, tempDir } from './cli-process.ts'
import { editConfig, type LogLine, logLines, mcpClient, type Stops, startReady } from './stack-fixture.ts'

// The first run of a new user, who configured no model provider: the runtime then falls back to
// its network default (`opencode/big-pickle`), which it cannot reach, and retries without end.
// The stack must say so — at start, in `doctor`, and in the job a client follows — instead of a
// job that stays `running` with nothing to explain it.
//
// Stand-in for the network default: the preferences point the runtime's `opencode` provider at
// a local server that answers every request 503 (no request may leave this machine); it counts
// what it got, so the test knows the runtime really went there. No `model` is configured.

const stops: Stops = []
let standIn: Server
let standInRequests = 0
let dir: string
let ownerKey: string
let mcpUrl: string
let upLines: () => LogLine[]

beforeAll(async () => {
  standIn = createServer((request, response) => {
    standInRequests++
    request.resume()
    response.writeHead(503, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ error: { message: 'the model provider is unreachable (test stand-in)' } }))
  })
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve))
  const address = standIn.address() as { port: number }
  stops.push(() => new Promise<void>((resolve) => standIn.close(() => resolve())))

  const temp = tempDir()
  stops.push(temp.remove)
  dir = join(temp.path, 'stack')
  expect((await runCli(['init', '--dir', dir])).code).toBe(0)
  const [gatewayPort, moderatorPort] = [await freePort(), await freePort()]
  editConfig(dir, (c) => {
    c.gateway.port = gatewayPort
    c.moderator.port = moderatorPort
  })
  const prefsFile = join(dir, 'config/assistant/opencode.json')
  const prefs = JSON.parse(readFileSync(prefsFile, 'utf8')) as Record<string, unknown>
  expect(prefs.model).toBeUndefined()
  prefs.provider = { opencode: { options: { baseURL: `http://127.0.0.1:${address.port}/v1` } } }
  writeFileSync(prefsFile, `${JSON.stringify(prefs, null, 2)}\n`)

  const { cli, ready } = await startReady(['up', '--dir', dir, '--stop-grace-ms', '3000'], stops, 90_000)
  upLines = () => logLines(cli.stdout())
  mcpUrl = ready.mcpUrl as string
  ownerKey = readFileSync(join(dir, 'state/credentials/owner/key'), 'utf8').trim()
}, 120_000)

afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
})

describe('the first run without a model provider (built CLI, real runtime)', () => {
  it('up warns at start, naming the fallback model and what to do (JSON lines when not on a terminal)', async () => {
    const warning = await waitFor(() => upLines().find((line) => line.event === 'model_unconfigured'), {
      timeoutMs: 60_000,
    })
    expect(warning).toMatchObject({ level: 40, fallback: 'opencode/big-pickle' })
    expect(warning.msg).toMatch(
      /^no model provider is configured: the assistant runtime falls back to opencode\/big-pickle/,
    )
    expect(String(warning.fix)).toMatch(/sallyport preset save/)
  })

  it("doctor fails the model readiness check with the provider's error, at the first retry", async () => {
    const before = standInRequests
    const started = Date.now()
    const run = await runCli(['doctor', '--dir', dir, '--json'])
    expect(run.code).toBe(9)
    const report = JSON.parse(run.stdout) as { checks: { name: string; status: string; detail: string }[] }
    const readiness = report.checks.find((c) => c.name === 'model readiness')
    expect(readiness?.status).toBe('fail')
    expect(readiness?.detail).toMatch(
      /^opencode\/big-pickle cannot answer: the runtime reported a failed provider request, which it retries \(attempt \d+\)/,
    )
    // The runtime asked the stand-in (not the network), and doctor did not wait the retries out.
    expect(standInRequests).toBeGreaterThan(before)
    expect(Date.now() - started).toBeLessThan(30_000)
    // /health stays about processes: the stack is up.
    expect(report.checks.find((c) => c.name === 'gateway')?.status).toBe('ok')
    expect(run.stdout).not.toContain(ownerKey)
  })

  it("a client's job stays running and shows the retry and the provider's error within one call", async () => {
    const client = await mcpClient(mcpUrl, ownerKey)
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: args })
        expect(result.isError).toBeFalsy()
        return result.structuredContent as {
          status: string
          job: string
          session: string
          retry?: { attempt: number; nextRetryAt?: string; message?: string }
        }
      }
      const run = await call('gateway.agent.run', { message: 'Say hello.', waitMs: 0 })
      // The runtime's first try fails at once and it starts retrying; one call then shows it.
      const seen = await waitFor(
        async () => {
          const status = await call('gateway.job.get', { job: run.job })
          expect(status.status).toBe('running')
          return status.retry ? status : undefined
        },
        { timeoutMs: 60_000 },
      )
      expect(seen.retry?.attempt).toBeGreaterThanOrEqual(1)
      expect(seen.retry?.message).toBeTruthy()
      const next = Date.parse(seen.retry?.nextRetryAt ?? '')
      expect(next).toBeGreaterThan(Date.now() - 120_000)
      expect(next).toBeLessThan(Date.now() + 600_000)
      const view = (
        await client.callTool({ name: 'gateway.session.get', arguments: { session: run.session } })
      ).structuredContent as { session: { status: string }; retry?: { attempt: number } }
      expect(view.session.status).toBe('retry')
      expect(view.retry?.attempt).toBeGreaterThanOrEqual(1)
      // The client can stop the retrying run.
      const cancel = await call('gateway.job.cancel', { job: run.job })
      expect(cancel.status).toBe('cancelled')
    } finally {
      await client.close()
    }
  })
})

/** `sallyport <args>` on a pseudo-terminal (util-linux `script`): what a person at a terminal sees. */
function onTerminal(args: string[]): { child: ChildProcess; output: () => string } {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: cliEnv({ TERM: 'dumb', NO_COLOR: '1' }),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  stops.push(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  })
  return { child, output: () => output }
}

describe('the console: human lines on a terminal, JSON otherwise', () => {
  it('serve on a terminal prints short lines in words, the warning among them, and no JSON', async () => {
    const port = await freePort()
    const { output } = onTerminal(['serve', '--dir', dir, '--port', String(port)])
    const text = await waitFor(
      () => {
        const out = output()
        return /WARN.*no model provider is configured/.test(out) ? out : undefined
      },
      { timeoutMs: 60_000 },
    )
    expect(text).toMatch(/\[\d\d:\d\d:\d\d\] INFO: gateway listening on http:\/\/127\.0\.0\.1:\d+/)
    expect(text).toMatch(/INFO: gateway serving http:\/\/127\.0\.0\.1:\d+/)
    expect(text).not.toMatch(/^\{"level"/m)
    // NO_COLOR is honoured: no escape sequences.
    expect(text).not.toContain('\u001b[')
    expect(text).not.toContain(ownerKey)
  })

  it('--log-format json on a terminal keeps JSON lines (what the image sets)', async () => {
    const port = await freePort()
    const { output } = onTerminal(['serve', '--dir', dir, '--port', String(port), '--log-format', 'json'])
    const text = await waitFor(() => (/"event":"ready"/.test(output()) ? output() : undefined), {
      timeoutMs: 60_000,
    })
    const lines = text.split(/\r?\n/).filter((line) => line.startsWith('{'))
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
  })
})
