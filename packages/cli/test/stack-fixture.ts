import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { basicAuth } from '@sallyport/runtime-process'
import { parseStackEnv } from '@sallyport/scheduler'
import {
  FAKE_MODERATION_MODEL_ID,
  FAKE_PROVIDER_ID,
  freePort,
  type ModelServer,
  scriptedModelPreferences,
  startModelServer,
  waitFor,
} from '@sallyport/testkit'
import { afterAll, beforeAll, expect } from 'vitest'
import { type LiveCli, runCli, startCli, tempDir } from './cli-process.ts'

/** Points the stack's user preferences at the scripted model (what an operator does for a real provider). */
export function useScriptedModel(dir: string, baseURL: string): void {
  const file = join(dir, 'config/assistant/opencode.json')
  const prefs = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  Object.assign(prefs, scriptedModelPreferences(baseURL))
  // In place: the file is the one writable file of a read-only directory.
  writeFileSync(file, `${JSON.stringify(prefs, null, 2)}\n`)
}

/** Sets ports (and anything else) in sallyport.json. */
/** The sections of sallyport.json a test edits. */
export interface EditableConfig {
  gateway: Record<string, unknown>
  native: Record<string, unknown>
  moderator: Record<string, unknown>
  [section: string]: unknown
}

export function editConfig(dir: string, edit: (config: EditableConfig) => void): void {
  const file = join(dir, 'sallyport.json')
  const config = JSON.parse(readFileSync(file, 'utf8'))
  edit(config)
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`)
}

/** JSON log lines of `up`/`serve`. */
export interface LogLine {
  event?: string
  child?: string
  pid?: number
  url?: string
  version?: string
  mcpUrl?: string
  msg?: string
  [field: string]: unknown
}

export function logLines(stdout: string): LogLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
}

/**
 * A v2 MCP client with a bearer key. `manual`: it declares form elicitation (MCP 2026-07-28
 * rounds) but fulfils nothing, so a call opting in with `allowInputRequired` gets the round back.
 */
export async function mcpClient(
  url: string,
  key: string,
  options: { manual?: boolean } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'sallyport-cli-e2e', version: '1.0.0' },
    {
      versionNegotiation: { mode: 'auto' },
      ...(options.manual && {
        capabilities: { elicitation: { form: {} } },
        inputRequired: { autoFulfill: false },
      }),
    },
  )
  if (options.manual) client.setRequestHandler('elicitation/create', async () => ({ action: 'cancel' }))
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  )
  return client
}

/** Cleanups a test file runs in reverse order after its tests. */
export type Stops = Array<() => Promise<void> | void>

/**
 * The scripted model of a test file: started before the file's tests; after them `stops` run
 * newest first, then the model closes. Used like the server itself (a view that reaches the
 * started server; touching it before the file's `beforeAll` ran throws).
 */
export function modelForFile(stops: Stops): ModelServer {
  let server: ModelServer | undefined
  beforeAll(async () => {
    server = await startModelServer()
  })
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop()
    await server?.close()
  })
  return new Proxy({} as ModelServer, {
    get(_target, key) {
      if (!server) throw new Error('the scripted model is not started yet (use it inside a test or hook)')
      const value = Reflect.get(server, key, server)
      return typeof value === 'function' ? value.bind(server) : value
    },
  })
}

/**
 * A request to the stack's native server (the URL recorded in `state/stack.env`) with the stack's
 * user and password, pinned to its workspace unless `path` already has a query.
 */
export async function nativeFetch(
  dir: string,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<Response> {
  const env = parseStackEnv(readFileSync(join(dir, 'state/stack.env'), 'utf8'))
  const password = readFileSync(join(dir, 'state/native-password'), 'utf8').trim()
  const query = path.includes('?') ? '' : `?directory=${encodeURIComponent(join(dir, 'workspace'))}`
  return fetch(`${env.get('SALLYPORT_NATIVE_URL')}${path}${query}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: basicAuth(env.get('SALLYPORT_NATIVE_USERNAME') ?? 'opencode', password),
      ...(init.body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  })
}

/** A fresh stack on free ports whose assistant and moderator use the scripted model. */
export async function newScriptedStack(model: ModelServer, stops: Stops): Promise<string> {
  const temp = tempDir()
  stops.push(temp.remove)
  const dir = join(temp.path, 'stack')
  expect((await runCli(['init', '--dir', dir])).code).toBe(0)
  const [gatewayPort, moderatorPort] = [await freePort(), await freePort()]
  editConfig(dir, (c) => {
    c.gateway.port = gatewayPort
    c.moderator.port = moderatorPort
    c.moderator.model = `${FAKE_PROVIDER_ID}/${FAKE_MODERATION_MODEL_ID}`
  })
  useScriptedModel(dir, model.baseURL)
  return dir
}

/** `sallyport up` of the stack (killed at the end), once it logged `ready`. */
export async function upScriptedStack(dir: string, stops: Stops): Promise<{ cli: LiveCli; ready: LogLine }> {
  return startReady(['up', '--dir', dir, '--stop-grace-ms', '3000'], stops, 90_000)
}

/** Starts a long-running CLI command (killed at the end) and waits for its `ready` log line. */
export async function startReady(
  args: string[],
  stops: Stops,
  timeoutMs: number,
): Promise<{ cli: LiveCli; ready: LogLine }> {
  const cli = startCli(args)
  stops.push(() => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL')
  })
  const ready = await waitForReadyLine(cli, args[0] ?? 'the CLI', timeoutMs)
  return { cli, ready }
}

/**
 * The CLI's `ready` log line. An exit ends the wait at once with its stderr and the last log lines
 * (a check that throws would only be retried until the timeout, hiding why).
 */
export async function waitForReadyLine(cli: LiveCli, label: string, timeoutMs: number): Promise<LogLine> {
  const lastLines = (): string =>
    cli
      .stdout()
      .split('\n')
      .filter((line) => !line.includes('"child_output"'))
      .slice(-20)
      .join('\n')
  return waitFor(() => logLines(cli.stdout()).find((line) => line.event === 'ready'), {
    timeoutMs,
    description: `${label} to log ready`,
    giveUp: () =>
      cli.child.exitCode !== null || cli.child.signalCode !== null
        ? new Error(
            `${label} exited early (${cli.child.exitCode ?? cli.child.signalCode}): ${cli.stderr()}\n${lastLines()}`,
          )
        : undefined,
  })
}
