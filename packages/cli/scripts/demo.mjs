// A first look without any model provider: a throw-away stack, the scripted model from testkit,
// `sallyport up` (the built CLI), and one MCP client session through the whole workflow.
// Run from the repo root after a build:  node packages/cli/scripts/demo.mjs
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { freePort, startModelServer, waitFor } from '@sallyport/testkit'

const bin = join(import.meta.dirname, '..', 'dist', 'bin.js')
const say = (text) => process.stdout.write(`\n▶ ${text}\n`)
const show = (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
const temp = mkdtempSync(join(tmpdir(), 'sallyport-demo-'))
const dir = join(temp, 'stack')
let up
let model
try {
  say(`sallyport init --dir ${dir}`)
  const init = spawn(process.execPath, [bin, 'init', '--dir', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  await new Promise((resolve, reject) =>
    init.once('exit', (code) => (code === 0 ? resolve() : reject(new Error('init failed')))),
  )

  say('scripted model server (testkit) as the provider in config/assistant/opencode.json')
  model = await startModelServer()
  const prefsFile = join(dir, 'config/assistant/opencode.json')
  const prefs = JSON.parse(readFileSync(prefsFile, 'utf8'))
  Object.assign(prefs, {
    model: 'fake/fake-1',
    small_model: 'fake/fake-1',
    enabled_providers: ['fake'],
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted demo model',
        options: { baseURL: model.baseURL, apiKey: 'demo' },
        models: { 'fake-1': { name: 'Demo', tool_call: true, limit: { context: 100000, output: 4096 } } },
      },
    },
  })
  writeFileSync(prefsFile, `${JSON.stringify(prefs, null, 2)}\n`)
  const config = JSON.parse(readFileSync(join(dir, 'sallyport.json'), 'utf8'))
  config.gateway.port = await freePort()
  config.native.port = await freePort()
  config.moderator.port = await freePort()
  writeFileSync(join(dir, 'sallyport.json'), `${JSON.stringify(config, null, 2)}\n`)

  say('sallyport up (assistant runtime + moderator runtime + gateway)')
  up = spawn(process.execPath, [bin, 'up', '--dir', dir], { stdio: ['ignore', 'pipe', 'inherit'] })
  let logs = ''
  up.stdout.on('data', (chunk) => {
    logs += chunk
  })
  const ready = await waitFor(
    () => {
      if (up.exitCode !== null) throw new Error('sallyport up exited')
      return logs
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((l) => l.event === 'ready')
    },
    { timeoutMs: 90_000 },
  )
  process.stdout.write(`${ready.msg}\n`)

  const key = readFileSync(join(dir, 'state/credentials/owner/key'), 'utf8').trim()
  const client = new Client(
    { name: 'sallyport-demo', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  )
  await client.connect(
    new StreamableHTTPClientTransport(new URL(ready.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  )
  const call = async (name, args) => {
    say(`${name} ${JSON.stringify(args)}`)
    const result = await client.callTool({ name, arguments: args })
    show(result.structuredContent ?? result.content)
    return result.structuredContent ?? {}
  }

  await call('gateway.catalog.get', {})
  const marker = model.script([
    {
      toolCall: {
        name: 'question',
        input: {
          questions: [
            {
              question: 'Which greeting?',
              header: 'Greeting',
              options: [
                { label: 'Hello', description: 'formal' },
                { label: 'Hi', description: 'casual' },
              ],
            },
          ],
        },
      },
    },
    (request) => ({ text: `You chose: ${request.toolResults.join(' ').slice(0, 80)}` }),
  ])
  const run = await call('gateway.agent.run', { message: `Greet me ${marker}`, title: 'Demo', waitMs: 15000 })
  const interaction = run.interactions?.[0]?.interaction
  if (interaction) await call('gateway.interaction.respond', { interaction, answers: [['Hi']] })
  await call('gateway.job.get', { job: run.job, waitMs: 15000 })
  await call('gateway.session.list', {})
  await call('gateway.session.get', { session: run.session, include: ['messages', 'todos'] })

  say('the agent is talked into reading the owner key through a symlink planted in the workspace')
  symlinkSync(join(dir, 'state/credentials/owner/key'), join(dir, 'workspace/notes.txt'))
  const probe = model.script([
    { toolCall: { name: 'read', input: { filePath: join(dir, 'workspace/notes.txt') } } },
    (request) => ({ text: `The tool said: ${request.toolResults.join(' ').slice(0, 120)}` }),
  ])
  const leak = await call('gateway.agent.run', { message: `Read notes.txt ${probe}`, waitMs: 15000 })
  if (leak.text?.includes(key)) throw new Error('the owner key reached the agent')
  await client.close()
  say('done: stopping the stack (SIGTERM)')
} finally {
  if (up && up.exitCode === null) {
    up.kill('SIGTERM')
    await new Promise((resolve) => up.once('exit', resolve))
  }
  await model?.close()
  rmSync(temp, { recursive: true, force: true })
}
