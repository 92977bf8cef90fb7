import { setTimeout as sleep } from 'node:timers/promises'
import { TestkitError } from './errors.ts'
import type { ExitWatch } from './exit-watch.ts'
import type { LogBuffer } from './log-buffer.ts'

/** The line `opencode serve` prints on stdout once it accepts connections. */
export const LISTENING_LINE = /opencode server listening on (https?:\/\/\S+)/

const LOG_TAIL_LINES = 40

/**
 * Resolves with the URL from the "listening" line. Nothing may connect before it: connections
 * opened earlier can hang forever (upstream NOTES.md §7).
 */
export async function waitForListening(input: {
  logs: LogBuffer
  exit: ExitWatch
  deadline: number
}): Promise<string> {
  const { logs, exit, deadline } = input
  let unsubscribe = (): void => {}
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      new Promise<string>((resolve) => {
        const found = LISTENING_LINE.exec(logs.text())
        if (found?.[1]) resolve(found[1])
        unsubscribe = logs.onLine((source, line) => {
          const match = source === 'out' ? LISTENING_LINE.exec(line) : null
          if (match?.[1]) resolve(match[1])
        })
      }),
      exit.promise.then((result) => {
        throw exitedError('before printing the listening line', result, logs)
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(timeoutError('no listening line', deadline, logs)),
          Math.max(0, deadline - Date.now()),
        )
      }),
    ])
  } finally {
    unsubscribe()
    clearTimeout(timer)
  }
}

/** Polls `GET /global/health` with short per-request timeouts until `{ healthy: true }`. */
export async function waitForHealthy(input: {
  url: string
  authHeader: string
  exit: ExitWatch
  deadline: number
  logs: LogBuffer
}): Promise<void> {
  const { url, authHeader, exit, deadline, logs } = input
  let last = 'no answer'
  while (Date.now() < deadline) {
    if (exit.exited) throw exitedError('before it was healthy', await exit.promise, logs)
    const perRequest = Math.max(100, Math.min(1_000, deadline - Date.now()))
    try {
      const response = await fetch(`${url}/global/health`, {
        headers: { authorization: authHeader },
        signal: AbortSignal.timeout(perRequest),
      })
      const body = (await response.json().catch(() => undefined)) as { healthy?: unknown } | undefined
      if (response.ok && body?.healthy === true) return
      last = `HTTP ${response.status}`
    } catch (error) {
      last = (error as Error).name
    }
    await sleep(50)
  }
  throw timeoutError(`not healthy (last: ${last})`, deadline, logs)
}

function exitedError(
  when: string,
  result: { code: number | null; signal: NodeJS.Signals | null; error?: Error },
  logs: LogBuffer,
): TestkitError {
  const how = result.error
    ? `failed to start: ${result.error.message}`
    : `exited (code ${result.code}, signal ${result.signal})`
  return new TestkitError(
    'ERR_TESTKIT_RUNTIME_EXITED',
    `opencode ${how} ${when}. Last output:\n${logs.tail(LOG_TAIL_LINES)}`,
    result.error ? { cause: result.error } : undefined,
  )
}

function timeoutError(what: string, deadline: number, logs: LogBuffer): TestkitError {
  return new TestkitError(
    'ERR_TESTKIT_RUNTIME_TIMEOUT',
    `opencode start timed out (${what}) at ${new Date(deadline).toISOString()}. Last output:\n${logs.tail(LOG_TAIL_LINES)}`,
  )
}
