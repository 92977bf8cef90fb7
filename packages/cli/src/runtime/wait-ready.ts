import { setTimeout as sleep } from 'node:timers/promises'
import { CliError } from '../errors.ts'
import { type Child, describeExit } from './child.ts'

/** The line `opencode serve` prints once it accepts connections. */
export const LISTENING_LINE = /opencode server listening on (https?:\/\/\S+)/

/**
 * Waits for the runtime's "listening" line, then polls `GET /global/health` (Basic auth, short
 * per-request timeouts) until it answers `{ healthy: true }`. Nothing may connect before the
 * line: connections opened earlier can hang forever. Resolves with the runtime's version.
 * Throws `ERR_CLI_START_FAILED` when the process exits or the deadline passes.
 */
export async function waitUntilReady(input: {
  child: Child
  authorization: string
  deadline: number
  /** Also wait until the runtime's instance for this directory answers (its first use is slow). */
  directory?: string
}): Promise<{ url: string; version: string }> {
  const { child, authorization, deadline } = input
  const url = await waitForListening(child, deadline)
  let last = 'no answer'
  while (Date.now() < deadline) {
    if (child.exited) throw exitedError(child, await child.exit, 'before it was healthy')
    try {
      const response = await fetch(`${url}/global/health`, {
        headers: { authorization },
        signal: AbortSignal.timeout(Math.max(100, Math.min(1000, deadline - Date.now()))),
      })
      const body = (await response.json().catch(() => undefined)) as
        | { healthy?: unknown; version?: unknown }
        | undefined
      if (response.ok && body?.healthy === true) {
        const version = String(body.version ?? 'unknown')
        if (input.directory === undefined) return { url, version }
        await warmInstance(url, authorization, input.directory, deadline, child)
        return { url, version }
      }
      last = `HTTP ${response.status}`
    } catch (error) {
      last = (error as Error).name
    }
    await sleep(100)
  }
  throw new CliError(
    'ERR_CLI_START_FAILED',
    `${child.name} runtime did not become healthy in time (last: ${last})`,
  )
}

/**
 * The runtime creates a per-directory instance on the first request naming that directory; that
 * bootstrap takes a moment and requests racing it failed intermittently. One list request for the
 * workspace before the gateway opens makes the first client request see a settled instance.
 */
async function warmInstance(
  url: string,
  authorization: string,
  directory: string,
  deadline: number,
  child: Child,
): Promise<void> {
  const target = `${url}/session?limit=1&directory=${encodeURIComponent(directory)}`
  let last = 'no answer'
  while (Date.now() < deadline) {
    if (child.exited) throw exitedError(child, await child.exit, 'while opening the workspace')
    try {
      const response = await fetch(target, {
        headers: { authorization },
        signal: AbortSignal.timeout(Math.max(500, Math.min(10_000, deadline - Date.now()))),
      })
      await response.arrayBuffer()
      if (response.ok) return
      last = `HTTP ${response.status}`
    } catch (error) {
      last = (error as Error).name
    }
    await sleep(100)
  }
  throw new CliError(
    'ERR_CLI_START_FAILED',
    `${child.name} runtime did not open the workspace in time (last: ${last})`,
  )
}

async function waitForListening(child: Child, deadline: number): Promise<string> {
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
              new CliError('ERR_CLI_START_FAILED', `${child.name} runtime printed no listening line in time`),
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

function exitedError(child: Child, info: Parameters<typeof describeExit>[0], when: string): CliError {
  const hint = child
    .tail(5)
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1)
  return new CliError(
    'ERR_CLI_START_FAILED',
    `${child.name} runtime ${describeExit(info)} ${when}${hint ? ` (last output: ${hint.slice(0, 200)})` : ''}`,
  )
}

/** The `authorization` header value for HTTP Basic. */
export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
}
