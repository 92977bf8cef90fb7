import { raceAbort } from './race-abort.ts'

/**
 * A bound on requests in flight to the runtime: at most `limit` at once, the rest wait. Waiting
 * requests are served round-robin across fairness keys (`keyOf`, read when a request arrives), in
 * order of arrival within a key, so one caller's flood cannot push another's requests to the back;
 * requests without a key share one more key (without `keyOf`: one queue, order of arrival). A
 * waiting request whose signal aborts leaves the queue at once (rejected with the
 * signal's reason, as `fetch` would). A slot is held until the response's body has been read to
 * its end, cancelled or failed (its connection is busy until then), or the request failed; a body
 * nobody reads frees its slot after {@link UNREAD_BODY_MS}, so a forgotten response cannot shrink
 * the bound for good.
 */
export interface RequestGate {
  run(signal: AbortSignal | null | undefined, start: () => Promise<Response>): Promise<Response>
  /**
   * As `run`, for a request whose answer is read whole by `start`: the slot is held until it
   * settles, or until `signal` aborts (the call then rejects with its reason), so a `start` that
   * ignores the signal cannot hold the slot for good.
   */
  runWhole<T>(signal: AbortSignal | null | undefined, start: () => Promise<T>): Promise<T>
  /** Requests sent and not answered yet, and requests waiting for a slot (for tests and metrics). */
  readonly inFlight: number
  readonly waiting: number
}

/** How long a response body nobody reads keeps its slot. */
export const UNREAD_BODY_MS = 10_000

// Statuses whose responses have no body (a Response cannot be built with one).
const NULL_BODY = new Set([101, 204, 205, 304])

/** The response, with `release` called once its body is done (or after {@link UNREAD_BODY_MS}). */
function releasedWithBody(response: Response, release: () => void): Response {
  const source = response.body
  if (!source || NULL_BODY.has(response.status)) {
    release()
    return response
  }
  const timer = setTimeout(release, UNREAD_BODY_MS)
  timer.unref?.()
  const done = (): void => {
    clearTimeout(timer)
    // On the next turn: the HTTP client frees the connection just after the body's last chunk,
    // and a request started at once would find it busy and open another.
    setImmediate(release)
  }
  const reader = source.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read()
        if (chunk.done) {
          done()
          controller.close()
        } else controller.enqueue(chunk.value)
      } catch (error) {
        done()
        controller.error(error)
      }
    },
    cancel(reason) {
      done()
      return reader.cancel(reason)
    },
  })
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}

export function createRequestGate(
  limit: number,
  keyOf: () => string | undefined = () => undefined,
): RequestGate {
  let inFlight = 0
  let waiting = 0
  // The keys with waiting requests, in turn order (a Map keeps insertion order): the next slot
  // goes to the first key, which then moves to the back if it still has requests waiting.
  const queues = new Map<string | undefined, Array<() => void>>()
  const next = (): void => {
    inFlight--
    const first = queues.entries().next()
    if (first.done) return
    const [key, queue] = first.value
    const wake = queue.shift() as () => void
    queues.delete(key)
    if (queue.length > 0) queues.set(key, queue)
    waiting--
    wake()
  }
  const acquire = (signal: AbortSignal | null | undefined): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason)
    if (inFlight < limit) {
      inFlight++
      return Promise.resolve()
    }
    const key = keyOf()
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const queue = queues.get(key)
        const i = queue ? queue.indexOf(wake) : -1
        if (queue && i >= 0) {
          queue.splice(i, 1)
          waiting--
          if (queue.length === 0) queues.delete(key)
        }
        reject(signal?.reason)
      }
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort)
        inFlight++
        resolve()
      }
      const queue = queues.get(key)
      if (queue) queue.push(wake)
      else queues.set(key, [wake])
      waiting++
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
  return {
    async run(signal, start) {
      await acquire(signal)
      let released = false
      const release = (): void => {
        if (released) return
        released = true
        next()
      }
      try {
        return releasedWithBody(await start(), release)
      } catch (error) {
        release()
        throw error
      }
    },
    async runWhole(signal, start) {
      await acquire(signal)
      try {
        const work = start()
        return await (signal ? raceAbort(work, signal) : work)
      } finally {
        // On the next turn, as for a streamed body: the connection is free just after.
        setImmediate(next)
      }
    },
    get inFlight() {
      return inFlight
    },
    get waiting() {
      return waiting
    },
  }
}
