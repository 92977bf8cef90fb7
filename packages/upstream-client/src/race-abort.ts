/**
 * Settles like `promise`, or rejects with `signal.reason` as soon as `signal` aborts, whichever
 * comes first. For awaits that must end on abort even when the awaited work ignores the signal.
 *
 * Unlike `Promise.race([promise, abortedPromise])` this keeps nothing behind: its `abort` listener
 * is removed the moment `promise` settles, and no long-lived promise collects a reaction (and so
 * the settled value) per call. A listener left on a request's signal keeps the call's result, and
 * through it the Request, reachable from that signal, which undici's request finalizer holds until
 * the Request is collected: neither ever was (finding 9).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    const settle = (): void => signal.removeEventListener('abort', onAbort)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        settle()
        resolve(value)
      },
      (error: unknown) => {
        settle()
        reject(error)
      },
    )
  })
}
