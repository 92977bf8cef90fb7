import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PLUGIN_WRAPPER_FILE } from '@sallyport/runtime-guard'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RuntimeHandle, type Stack, startRuntime, startStack, step, waitFor } from '../src/index.ts'
import { type RegistryRecorder, startRegistryRecorder } from './npm-registry-recorder.ts'

// End-to-end: the real opencode binary with the scripted model. Plain fetch + Basic auth only.

interface MessageEntry {
  info: {
    id: string
    role: string
    time: { completed?: number }
    finish?: string
    error?: { name: string; data?: Record<string, unknown> }
  }
  parts: Array<{ type: string; text?: string; tool?: string; state?: { status: string; output?: string } }>
}

let stack: Stack
let runtime: RuntimeHandle
let registry: RegistryRecorder
const isRoot = process.getuid?.() === 0

/** npm pointed at a recorder and NOT offline, so an attempted plugin install would show up as a hit. */
const npmProbeEnv = (): Record<string, string | undefined> => ({
  npm_config_registry: registry.url,
  npm_config_offline: undefined,
})

async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await runtime.fetch(path, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${await response.text()}`)
  const text = await response.text()
  return (text ? JSON.parse(text) : undefined) as T
}

async function startTurn(text: string, agent?: string): Promise<string> {
  const session = await api<{ id: string }>('POST', '/session', agent ? { agent } : {})
  await api('POST', `/session/${session.id}/prompt_async`, {
    ...(agent ? { agent } : {}),
    parts: [{ type: 'text', text }],
  })
  return session.id
}

/** Waits until the session is idle and its last assistant message is finished; returns all messages. */
async function finishedTurn(sessionId: string, timeoutMs = 30_000): Promise<MessageEntry[]> {
  return waitFor(
    async () => {
      const status = await api<Record<string, unknown>>('GET', '/session/status')
      if (status[sessionId]) return undefined
      const messages = await api<MessageEntry[]>('GET', `/session/${sessionId}/message`)
      const last = messages.at(-1)
      return last?.info.role === 'assistant' && last.info.time.completed ? messages : undefined
    },
    { timeoutMs, intervalMs: 100, description: `turn of ${sessionId} finished` },
  )
}

const textOf = (messages: MessageEntry[]): string =>
  messages
    .filter((m) => m.info.role === 'assistant')
    .flatMap((m) => m.parts.filter((p) => p.type === 'text').map((p) => p.text))
    .join('')

beforeAll(async () => {
  registry = await startRegistryRecorder()
  stack = await startStack({ runtime: { env: npmProbeEnv() } })
  runtime = stack.runtime
})

afterAll(async () => {
  await stack?.stop()
  await registry?.close()
})

// Generous deadlines: on a loaded 2-vCPU machine a first turn took up to 7 s.
describe('startRuntime against the real opencode binary', { timeout: 60_000 }, () => {
  it('reports start timings and a healthy server', async () => {
    expect(runtime.listeningMs).toBeGreaterThan(0)
    expect(runtime.startupMs).toBeGreaterThanOrEqual(runtime.listeningMs)
    console.log(`runtime start: listening ${runtime.listeningMs} ms, healthy ${runtime.startupMs} ms`)
    expect(await api('GET', '/global/health')).toEqual({ healthy: true, version: '1.18.33' })
  })

  it('answers 401 without the Basic credentials', async () => {
    const response = await fetch(`${runtime.url}/global/health`)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic/)
  })

  it('completes a scripted text turn', async () => {
    const marker = stack.model.script([{ text: 'hello from the script' }])
    const sessionId = await startTurn(`say hello ${marker}`)
    const messages = await finishedTurn(sessionId)
    expect(textOf(messages)).toBe('hello from the script')
    expect(messages.at(-1)?.info.finish).toBe('stop')
    const recorded = stack.model.requestsFor(marker)
    expect(recorded).toHaveLength(1)
    expect(recorded[0]?.sessionId).toBe(sessionId)
  })

  it('runs a tool call and feeds its result to the next step', async () => {
    const marker = stack.model.script([
      { toolCall: { name: 'bash', input: { command: 'echo round-trip-ok', description: 'echo' } } },
      (request) => ({ text: `tool said: ${request.toolResults.join('').trim()}` }),
    ])
    const messages = await finishedTurn(await startTurn(`run it ${marker}`))
    expect(textOf(messages)).toBe('tool said: round-trip-ok')
    expect(stack.model.requestsFor(marker).map((r) => r.step)).toEqual([0, 1])
  })

  it('runs write, edit and todowrite tool calls built with step', async () => {
    const file = join(runtime.directory, 'written.txt')
    const marker = stack.model.script([
      step.write(file, 'hello world\n'),
      step.edit(file, 'world', 'testkit'),
      step.todowrite([{ content: 'check the harness', status: 'in_progress', priority: 'high' }]),
      step.text('all done'),
    ])
    const sessionId = await startTurn(`write ${marker}`)
    const messages = await finishedTurn(sessionId)
    expect(textOf(messages)).toBe('all done')
    const tools = messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool')
    expect(tools.map((p) => [p.tool, p.state?.status])).toEqual([
      ['write', 'completed'],
      ['edit', 'completed'],
      ['todowrite', 'completed'],
    ])
    expect(readFileSync(file, 'utf8')).toBe('hello testkit\n')
    expect(await api('GET', `/session/${sessionId}/todo`)).toEqual([
      { content: 'check the harness', status: 'in_progress', priority: 'high' },
    ])
  })

  it('keeps concurrent sessions on their own step of the same script', async () => {
    const marker = stack.model.script([
      { toolCall: { name: 'bash', input: { command: 'echo one', description: 'echo' } } },
      { text: 'second step' },
    ])
    const ids = await Promise.all([1, 2, 3].map((n) => startTurn(`session ${n} ${marker}`)))
    const turns = await Promise.all(ids.map((id) => finishedTurn(id)))
    for (const messages of turns) expect(textOf(messages)).toBe('second step')
    expect(stack.model.requestsFor(marker)).toHaveLength(6)
  })

  it('turns a bash call under the guarded agent into a pending permission', async () => {
    const marker = stack.model.script([
      { toolCall: { name: 'bash', input: { command: 'echo guarded', description: 'echo' } } },
      { text: 'after permission' },
    ])
    const sessionId = await startTurn(`guarded ${marker}`, 'guarded')
    type Ask = { id: string; sessionID: string; permission: string; patterns: string[] }
    const ask = await waitFor(
      async () => (await api<Ask[]>('GET', '/permission')).find((p) => p.sessionID === sessionId),
      { timeoutMs: 30_000 },
    )
    expect(ask).toMatchObject({ permission: 'bash', patterns: ['echo guarded'] })
    await api('POST', `/permission/${ask.id}/reply`, { reply: 'once' })
    expect(textOf(await finishedTurn(sessionId))).toBe('after permission')
  })

  it('turns a question tool call into a pending question', async () => {
    const marker = stack.model.script([
      step.question({ question: 'Which colour?', header: 'Colour', options: ['Blue', 'Red'] }),
      (request) => ({ text: request.toolResults.join('').includes('Blue') ? 'you chose blue' : 'no answer' }),
    ])
    const sessionId = await startTurn(`ask me ${marker}`, 'remote')
    type Question = { id: string; sessionID: string; questions: Array<{ question: string }> }
    const question = await waitFor(
      async () => (await api<Question[]>('GET', '/question')).find((q) => q.sessionID === sessionId),
      { timeoutMs: 30_000 },
    )
    expect(question.questions[0]?.question).toBe('Which colour?')
    await api('POST', `/question/${question.id}/reply`, { answers: [['Blue']] })
    expect(textOf(await finishedTurn(sessionId))).toBe('you chose blue')
  })

  it.each([
    ['remote', 'bash', 'error', { command: 'echo denied', description: 'echo' }],
    ['remote', 'read', 'error', { filePath: 'notes.txt' }],
    ['remote-read', 'bash', 'error', { command: 'echo denied', description: 'echo' }],
    ['remote-read', 'read', 'completed', { filePath: 'notes.txt' }],
  ])('profile %s: a scripted %s call ends as %s without asking', async (agent, tool, status, input) => {
    writeFileSync(join(runtime.directory, 'notes.txt'), 'profile test file\n')
    const marker = stack.model.script([{ toolCall: { name: tool, input } }, { text: 'after the tool' }])
    const sessionId = await startTurn(`use ${tool} ${marker}`, agent)
    const messages = await finishedTurn(sessionId)
    const part = messages.flatMap((m) => m.parts).find((p) => p.type === 'tool')
    expect(part).toMatchObject({ tool, state: { status } })
    expect(textOf(messages)).toBe('after the tool')
    const asks = await api<Array<{ sessionID: string }>>('GET', '/permission')
    expect(asks.filter((a) => a.sessionID === sessionId)).toEqual([])
  })

  it('profile remote-full: bash asks for permission; reject without message ends the turn', async () => {
    const marker = stack.model.script([
      { toolCall: { name: 'bash', input: { command: 'echo full', description: 'echo' } } },
      { text: 'not reached' },
    ])
    const sessionId = await startTurn(`full ${marker}`, 'remote-full')
    type Ask = { id: string; sessionID: string; permission: string }
    const ask = await waitFor(
      async () => (await api<Ask[]>('GET', '/permission')).find((p) => p.sessionID === sessionId),
      { timeoutMs: 30_000 },
    )
    expect(ask.permission).toBe('bash')
    await api('POST', `/permission/${ask.id}/reply`, { reply: 'reject' })
    const messages = await finishedTurn(sessionId)
    expect(messages.at(-1)?.info.finish).toBe('tool-calls')
    expect(stack.model.requestsFor(marker)).toHaveLength(1)
  })

  it('fails the turn fast on a scripted non-retryable error', async () => {
    const marker = stack.model.script([{ error: { message: 'scripted failure' } }])
    const started = Date.now()
    const messages = await finishedTurn(await startTurn(`fail ${marker}`), 10_000)
    expect(Date.now() - started).toBeLessThan(10_000)
    const error = messages.at(-1)?.info.error
    expect(error?.name).toBe('APIError')
    expect(error?.data).toMatchObject({ statusCode: 400, isRetryable: false })
    expect(stack.model.requestsFor(marker)).toHaveLength(1)
  })

  it('aborting a slow turn disconnects the model stream', async () => {
    const marker = stack.model.script([
      { text: ['slow ', 'answer ', 'never ', 'finishes'], intervalMs: 2_000 },
    ])
    const sessionId = await startTurn(`slow ${marker}`)
    await stack.model.waitForRequest((r) => r.scriptId === marker.slice(9, -2), 30_000)
    await api('POST', `/session/${sessionId}/abort`)
    const messages = await finishedTurn(sessionId)
    expect(messages.at(-1)?.info.error?.name).toBe('MessageAbortedError')
    await waitFor(() => stack.model.requestsFor(marker)[0]?.outcome === 'aborted')
  })

  // Runs after the turns above, i.e. well after instance bootstrap, which is when the runtime
  // starts its background install (see the control test below for how fast it shows up).
  it('never installs npm packages into the config dirs and asks no registry', () => {
    const { sandbox } = runtime
    expect(readdirSync(sandbox.configDir)).toEqual(['opencode.json', 'plugins'])
    expect(readdirSync(join(sandbox.configDir, 'plugins'))).toEqual([PLUGIN_WRAPPER_FILE])
    expect(readdirSync(join(sandbox.configHome, 'opencode'))).toEqual([])
    expect(readdirSync(sandbox.managedConfigDir)).toEqual([])
    expect(existsSync(join(sandbox.home, '.npm'))).toBe(false)
    expect(existsSync(join(sandbox.cacheHome, 'opencode', 'packages'))).toBe(false)
    expect(registry.hits).toEqual([])
    expect(stack.model.requests.every((r) => r.path.startsWith('/v1/'))).toBe(true)
  })

  it.skipIf(!isRoot)(
    'writes nothing as the runtime user outside its temp dir (needs root: runtime runs as nobody)',
    () => {
      expect(runtime.user?.uid).toBe(65534)
      // The runtime user can only write to world-writable places; it would own whatever it left there.
      const stray = [tmpdir(), '/tmp', '/var/tmp', '/dev/shm']
        .filter((dir) => existsSync(dir))
        .flatMap((dir) => readdirSync(dir).map((name) => join(dir, name)))
        .filter((path) => !/[\\/]sallyport-runtime-[^/\\]+$/.test(path))
        .filter((path) => {
          try {
            return statSync(path).uid === runtime.user?.uid
          } catch {
            return false
          }
        })
      expect(stray).toEqual([])
      expect(existsSync(join(runtime.sandbox.tmp, 'opencode'))).toBe(true) // TMPDIR is honoured
    },
  )
})

describe('control: the npm checks above can fail', () => {
  it.skipIf(!isRoot)(
    'as root with writable config dirs the runtime does start the plugin install (needs root)',
    async () => {
      const careless = await startRuntime({ user: 'current', env: npmProbeEnv() })
      try {
        const before = registry.hits.length
        await careless.fetch('/session', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
        const started = Date.now()
        await waitFor(() => registry.hits.length > before, { timeoutMs: 15_000, description: 'registry hit' })
        console.log(
          `control: plugin install reached the registry ${Date.now() - started} ms after the first session`,
        )
        expect(registry.hits.at(-1)).toContain('@opencode-ai%2fplugin')
        expect(readdirSync(careless.configDir)).toContain('.gitignore')
      } finally {
        await careless.stop()
      }
    },
    30_000,
  )
})

describe('RuntimeHandle.stop', () => {
  it('leaves no process and no temp dir behind', async () => {
    const own = await startRuntime()
    expect(() => process.kill(own.pid, 0)).not.toThrow()
    await own.stop()
    expect(own.exited).toBe(true)
    expect(() => process.kill(own.pid, 0)).toThrow(/ESRCH/)
    expect(() => process.kill(-own.pid, 0)).toThrow(/ESRCH/)
    expect(existsSync(own.tempDir)).toBe(false)
    await own.stop() // idempotent
  })
})
