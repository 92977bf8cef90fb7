/**
 * A bound on requests in flight to the runtime: at most `limit` at once, the rest wait in order
 * of arrival. A waiting request whose signal aborts leaves the queue at once (rejected with the
 * signal's reason, as `fetch` would). A slot is held until the response's headers arrive (or the
 * request fails): the runtime answers small JSON bodies that are read right away, so the number of
 * connections stays close to the bound, whatever the number of callers.
 */
export interface RequestGate {
  run(signal: AbortSignal | null | undefined, start: () => Promise<Response>): Promise<Response>
  /** Requests sent and not answered yet, and requests waiting for a slot (for tests and metrics). */
  readonly inFlight: number
  readonly waiting: number
}

export function createRequestGate(limit: number): RequestGate {
  let inFlight = 0
  const queue: Array<() => void> = []
  const next = (): void => {
    inFlight--
    const wake = queue.shift()
    if (wake) wake()
  }
  const acquire = (signal: AbortSignal | null | undefined): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason)
    if (inFlight < limit) {
      inFlight++
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = queue.indexOf(wake)
        if (i >= 0) queue.splice(i, 1)
        reject(signal?.reason)
      }
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort)
        inFlight++
        resolve()
      }
      queue.push(wake)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
  return {
    async run(signal, start) {
      await acquire(signal)
      try {
        return await start()
      } finally {
        next()
      }
    },
    get inFlight() {
      return inFlight
    },
    get waiting() {
      return queue.length
    },
  }
}
