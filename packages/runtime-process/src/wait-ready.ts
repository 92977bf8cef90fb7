import http from 'node:http'
import https from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'
import { RuntimeProcessError } from './errors.ts'
import { describeExit, type ExitInfo, type SupervisedProcess } from './spawn-process.ts'

/** The line `opencode serve` prints on stdout once it accepts connections; group 1 is its URL. */
export const LISTENING_LINE = /opencode server listening on (https?:\/\/\S+)/

/** The `authorization` header value for HTTP Basic. */
export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
}

/**
 * Resolves with the URL of the runtime's "listening" line (without a trailing slash). Nothing may
 * connect before that line: connections opened earlier can hang forever. Throws
 * `RuntimeProcessError`: `ERR_RUNTIME_PROCESS_EXITED` when the process ends first,
 * `ERR_RUNTIME_PROCESS_TIMEOUT` at `deadline` (epoch ms).
 */
export async function waitForListening(child: SupervisedProcess, deadline: number): Promise<string> {
  let unsubscribe = (): void => {}
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      new Promise<string>((resolve) => {
        unsubscribe = child.onLine((line, stream) => {
          const match = stream === 'stdout' ? LISTENING_LINE.exec(line) : null
          if (match?.[1]) resolve(match[1].replace(/\/$/, ''))
        })
      }),
      child.exit.then((info) => {
        throw exitedError(child, info, 'before it was listening')
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new RuntimeProcessError(
                'ERR_RUNTIME_PROCESS_TIMEOUT',
                `${child.name} runtime printed no listening line in time`,
              ),
            ),
          Math.max(0, deadline - Date.now()),
        )
      }),
    ])
  } finally {
    unsubscribe()
    clearTimeout(timer)
  }
}

/** Input of {@link waitUntilHealthy}. */
export interface WaitHealthyInput {
  readonly child: SupervisedProcess
  /** The URL of the listening line. */
  readonly url: string
  /** {@link basicAuth} of the runtime's credentials. */
  readonly authorization: string
  /** Epoch milliseconds. */
  readonly deadline: number
  /** Pause between attempts; default 100 ms. */
  readonly intervalMs?: number
}

/**
 * Polls `GET /global/health` (Basic auth, at most 1 s per request) until it answers
 * `{ healthy: true }`; resolves with the runtime's version. Throws `RuntimeProcessError`
 * `ERR_RUNTIME_PROCESS_EXITED` or `ERR_RUNTIME_PROCESS_TIMEOUT`.
 */
export async function waitUntilHealthy(input: WaitHealthyInput): Promise<{ version: string }> {
  const { child, url, authorization } = input
  const outcome = await poll(input, 'before it was healthy', { min: 100, max: 1000 }, async (signal) => {
    const response = await get(`${url}/global/health`, authorization, signal)
    const body = parseJson(response.text) as { healthy?: unknown; version?: unknown } | undefined
    if (response.status === 200 && body?.healthy === true)
      return { version: String(body.version ?? 'unknown') }
    return `HTTP ${response.status}`
  })
  if (outcome.ok) return outcome.value
  throw new RuntimeProcessError(
    'ERR_RUNTIME_PROCESS_TIMEOUT',
    `${child.name} runtime did not become healthy in time (last: ${outcome.last})`,
  )
}

/** Input of {@link waitUntilReady}. */
export interface WaitReadyInput {
  readonly child: SupervisedProcess
  readonly authorization: string
  readonly deadline: number
  /** Also wait until the runtime's instance for this directory answers (its first use is slow). */
  readonly directory?: string | undefined
  readonly intervalMs?: number
}

/**
 * {@link waitForListening}, then {@link waitUntilHealthy}, then (with `directory`) one request
 * that opens the runtime's instance for that directory. Resolves with the URL and version.
 *
 * @example
 * const { url, version } = await waitUntilReady({ child, authorization: basicAuth(user, password), deadline: Date.now() + 60_000 })
 */
export async function waitUntilReady(input: WaitReadyInput): Promise<{ url: string; version: string }> {
  const url = await waitForListening(input.child, input.deadline)
  const { version } = await waitUntilHealthy({ ...input, url })
  if (input.directory !== undefined) await warmInstance({ ...input, url, directory: input.directory })
  return { url, version }
}

/**
 * The runtime creates a per-directory instance on the first request naming that directory; that
 * bootstrap takes a moment and requests racing it failed intermittently. One list request for the
 * workspace before anything else uses it makes the first real request see a settled instance.
 */
async function warmInstance(input: WaitReadyInput & { url: string; directory: string }): Promise<void> {
  const { child, url, authorization, directory } = input
  const target = `${url}/session?limit=1&directory=${encodeURIComponent(directory)}`
  const outcome = await poll(
    input,
    'while opening the workspace',
    { min: 500, max: 10_000 },
    async (signal) => {
      const response = await get(target, authorization, signal)
      return response.status >= 200 && response.status < 300 ? true : `HTTP ${response.status}`
    },
  )
  if (outcome.ok) return
  throw new RuntimeProcessError(
    'ERR_RUNTIME_PROCESS_TIMEOUT',
    `${child.name} runtime did not open the workspace in time (last: ${outcome.last})`,
  )
}

/**
 * Repeats `attempt` (each with a timeout between `timeout.min` and `timeout.max` ms, never past the
 * deadline) until it returns a value; a string it returns, or the name of an error it throws, is
 * the last answer for the timeout message. Throws `ERR_RUNTIME_PROCESS_EXITED` once the process
 * has exited.
 */
async function poll<T>(
  input: { child: SupervisedProcess; deadline: number; intervalMs?: number | undefined },
  when: string,
  timeout: { min: number; max: number },
  attempt: (signal: AbortSignal) => Promise<T | string>,
): Promise<{ ok: true; value: T } | { ok: false; last: string }> {
  const { child, deadline } = input
  let last = 'no answer'
  while (Date.now() < deadline) {
    if (child.exited) throw exitedError(child, await child.exit, when)
    try {
      const result = await attempt(
        AbortSignal.timeout(Math.max(timeout.min, Math.min(timeout.max, deadline - Date.now()))),
      )
      if (typeof result !== 'string') return { ok: true, value: result }
      last = result
    } catch (error) {
      last = (error as Error).name
    }
    await sleep(input.intervalMs ?? 100)
  }
  return { ok: false, last }
}

/** Most bytes of an answer read here (a health answer is tens of bytes). */
const MAX_ANSWER_BYTES = 1 << 20

/**
 * One GET over `node:http` on a connection of its own, its whole answer (at most
 * {@link MAX_ANSWER_BYTES}, the rest dropped). Not the global fetch: it would load Node's fetch
 * client into the supervisor's process for good (about 10 MiB) for a few health checks. Rejects
 * with the signal's reason on abort, with the connection's error otherwise.
 */
function get(
  url: string,
  authorization: string,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? https.get : http.get
    const request = send(url, { headers: { authorization }, agent: false, signal }, (response) => {
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        if (size < MAX_ANSWER_BYTES) chunks.push(chunk)
        size += chunk.length
      })
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      )
      response.once('error', (error) => reject(signal.aborted ? signal.reason : error))
    })
    request.once('error', (error) => reject(signal.aborted ? signal.reason : error))
  })
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function exitedError(child: SupervisedProcess, info: ExitInfo, when: string): RuntimeProcessError {
  const hint = child
    .tail(5)
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1)
  return new RuntimeProcessError(
    'ERR_RUNTIME_PROCESS_EXITED',
    `${child.name} runtime ${describeExit(info)} ${when}${hint ? ` (last output: ${hint.slice(0, 200)})` : ''}`,
    { exit: info, ...(info.error ? { cause: info.error } : {}) },
  )
}
