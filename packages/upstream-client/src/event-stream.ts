import { backoffDelay, sleep } from './backoff.ts'
import { isRetryableStatus, UpstreamError } from './errors.ts'
import type { EventStreamOptions } from './options.ts'
import { raceAbort } from './race-abort.ts'
import { excerpt, type Redactor, sanitizeCause } from './redact.ts'
import { safely } from './safely.ts'
import { type RawEvent, RawEventSchema } from './schemas.ts'
import { createSseParser } from './sse-parser.ts'
import type { Send } from './transport.ts'

/** The one `GET /event` connection of a client, shared by all its subscribers. */
export interface EventStream {
  /**
   * Adds a listener of every event (with the size of its data, in UTF-16 code units: about its
   * bytes); opens the stream if it is the first. Returns its removal.
   */
  subscribe(listener: (event: RawEvent, size: number) => void): () => void
  /** Listens to connection changes without opening the stream. Returns its removal. */
  onConnectionChange(listener: (connected: boolean) => void): () => void
  /**
   * True while the stream is live: from an event of a connection until that connection ends or
   * nothing at all has arrived on it for `staleAfterMs` (a stalled connection, which the watchdog
   * replaces later; it is live again from its next event).
   */
  readonly connected: boolean
  /** Why the last connection attempt failed or ended, if it did. */
  readonly lastError: UpstreamError | undefined
  /** Closes the stream for good; later subscriptions receive nothing. */
  close(): void
}

interface StreamDeps {
  readonly baseUrl: string
  readonly send: Send
  readonly redact: Redactor
  /** Time allowed from request to response headers. */
  readonly connectTimeoutMs: number
  readonly tuning: Required<EventStreamOptions>
}

const OPERATION = 'event.subscribe'

class WatchdogExpired extends Error {}
class ConnectTimeout extends Error {}

/**
 * Creates the shared event stream. It connects lazily on the first subscription, reconnects
 * after any end or failure with exponential backoff and jitter, reconnects when nothing arrived
 * for `heartbeatTimeoutMs` (the runtime sends `server.heartbeat` every 10 s), and disconnects when
 * the last subscriber leaves or on {@link EventStream.close}.
 *
 * A connection silent for `staleAfterMs` (shorter than the watchdog: one heartbeat missed) stops
 * counting as live before the watchdog replaces it: a proxy that stopped forwarding keeps the
 * TCP connection open, and 25 s of waits trusting it would answer stale states. Waits then poll
 * (`session-events.ts`) until an event arrives again, on it or on a new connection.
 */
export function createEventStream(deps: StreamDeps): EventStream {
  const listeners = new Set<(event: RawEvent, size: number) => void>()
  const connectionListeners = new Set<(connected: boolean) => void>()
  let connected = false
  let closed = false
  let lastError: UpstreamError | undefined
  // One controller per run of the connect loop: aborting it ends that run (sleep included).
  let run: AbortController | undefined

  const setConnected = (value: boolean): void => {
    if (connected === value) return
    connected = value
    for (const listener of [...connectionListeners]) safely(() => listener(value))
  }

  const deliver = (event: RawEvent, size: number): void => {
    for (const listener of [...listeners]) safely(() => listener(event, size))
  }

  const loop = async (runSignal: AbortSignal): Promise<void> => {
    let attempt = 0
    while (!runSignal.aborted) {
      try {
        await connectOnce(
          runSignal,
          () => {
            if (runSignal.aborted) return
            attempt = 0
            lastError = undefined
            setConnected(true)
          },
          () => {
            if (runSignal.aborted || !connected) return
            lastError = new UpstreamError(
              'ERR_UPSTREAM_TIMEOUT',
              `upstream ${OPERATION} stalled: nothing arrived for ${deps.tuning.staleAfterMs} ms`,
              { operation: OPERATION, isRetryable: true },
            )
            setConnected(false)
          },
        )
        if (!runSignal.aborted)
          lastError = new UpstreamError('ERR_UPSTREAM_NETWORK', `upstream ${OPERATION} ended`, {
            operation: OPERATION,
            isRetryable: true,
          })
      } catch (error) {
        if (!runSignal.aborted) lastError = toUpstreamError(error)
      }
      // An aborted run was stopped by stopRun(), which already reported the disconnection; a
      // newer run may be live by now, so this one must not touch the shared state any more.
      if (runSignal.aborted) return
      setConnected(false)
      const { initialBackoffMs, maxBackoffMs, random } = deps.tuning
      await sleep(backoffDelay(attempt++, initialBackoffMs, maxBackoffMs, random), runSignal)
    }
  }

  /** One connection: `onEvent` on each event (it is live), `onSilent` when it goes stale. */
  const connectOnce = async (
    runSignal: AbortSignal,
    onEvent: () => void,
    onSilent: () => void,
  ): Promise<void> => {
    const connection = new AbortController()
    let cancelBody: (() => void) | undefined
    // Cancel the body BEFORE aborting: some fetch implementations (msw's interceptor) leave a
    // cancel issued after the abort hanging, and the runtime must see the disconnect.
    const end = (reason: unknown): void => {
      cancelBody?.()
      connection.abort(reason)
    }
    // Every await below is raced against the connection's signal, so a fetch that ignores the
    // signal cannot stall the loop. raceAbort, not Promise.race with one long-lived "aborted"
    // promise: that promise would collect a reaction, and with it the chunk read, per await for
    // as long as the connection lasts (finding 9).
    const untilAborted = <T>(promise: Promise<T>): Promise<T> => raceAbort(promise, connection.signal)
    const stop = (): void => end(runSignal.reason)
    runSignal.addEventListener('abort', stop, { once: true })
    let watchdog = setTimeout(() => end(new ConnectTimeout()), deps.connectTimeoutMs)
    let stale: ReturnType<typeof setTimeout> | undefined
    const arm = (): void => {
      clearTimeout(watchdog)
      watchdog = setTimeout(() => end(new WatchdogExpired()), deps.tuning.heartbeatTimeoutMs)
      clearTimeout(stale)
      stale = setTimeout(onSilent, deps.tuning.staleAfterMs)
    }
    try {
      const response = await untilAborted(
        deps.send(
          new Request(`${deps.baseUrl}/event`, {
            headers: { accept: 'text/event-stream' },
            signal: connection.signal,
          }),
        ),
      )
      if (!response.ok || !response.body) {
        const body = await untilAborted(response.text()).catch(() => undefined)
        throw new UpstreamError(
          'ERR_UPSTREAM_HTTP',
          `upstream ${OPERATION} failed: HTTP ${response.status}`,
          {
            operation: OPERATION,
            status: response.status,
            body: excerpt(body, deps.redact),
            isRetryable: isRetryableStatus(response.status),
          },
        )
      }
      arm()
      const parser = createSseParser({
        onActivity: arm,
        onMessage: (message) => {
          const event = parseEvent(message.data)
          if (!event) return
          // Live from its first event, and again from the first one after a silence: reported
          // before the event is delivered, so waits look again (events of a stall may be lost).
          if (!connected) onEvent()
          deliver(event, message.data.length)
        },
      })
      // Read the body itself (no pipeThrough): cancelling a piped stream does not reach the source
      // reliably, and the runtime must see the disconnect.
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      cancelBody = () => void reader.cancel().catch(() => undefined)
      for (;;) {
        const { value, done } = await untilAborted(reader.read())
        if (done) return
        parser.push(decoder.decode(value, { stream: true }))
      }
    } catch (error) {
      const reason: unknown = connection.signal.reason
      if (reason instanceof WatchdogExpired || reason instanceof ConnectTimeout)
        throw new UpstreamError(
          'ERR_UPSTREAM_TIMEOUT',
          reason instanceof WatchdogExpired
            ? `upstream ${OPERATION} went silent`
            : `upstream ${OPERATION} timed out connecting`,
          { operation: OPERATION, isRetryable: true },
        )
      throw error
    } finally {
      clearTimeout(watchdog)
      clearTimeout(stale)
      runSignal.removeEventListener('abort', stop)
    }
  }

  const toUpstreamError = (error: unknown): UpstreamError =>
    UpstreamError.isInstance(error)
      ? error
      : new UpstreamError('ERR_UPSTREAM_NETWORK', `upstream ${OPERATION} failed: no response`, {
          operation: OPERATION,
          isRetryable: true,
          cause: sanitizeCause(error, deps.redact),
        })

  const start = (): void => {
    if (run || closed) return
    const controller = new AbortController()
    run = controller
    void loop(controller.signal)
  }

  const stopRun = (): void => {
    run?.abort()
    run = undefined
    setConnected(false)
  }

  return {
    subscribe(listener) {
      if (closed) return () => undefined
      const entry = (event: RawEvent, size: number): void => listener(event, size)
      listeners.add(entry)
      start()
      return () => {
        if (!listeners.delete(entry)) return
        if (listeners.size === 0) stopRun()
      }
    },
    onConnectionChange(listener) {
      const entry = (value: boolean): void => listener(value)
      connectionListeners.add(entry)
      return () => void connectionListeners.delete(entry)
    },
    get connected() {
      return connected
    },
    get lastError() {
      return lastError
    },
    close() {
      closed = true
      listeners.clear()
      stopRun()
      connectionListeners.clear()
    },
  }
}

function parseEvent(data: string): RawEvent | undefined {
  let json: unknown
  try {
    json = JSON.parse(data)
  } catch {
    return undefined
  }
  const parsed = RawEventSchema.safeParse(json)
  return parsed.success ? parsed.data : undefined
}
