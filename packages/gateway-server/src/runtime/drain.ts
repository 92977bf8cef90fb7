import { setMaxListeners } from 'node:events'
import type { RuntimePort } from './port.js'

// Shutting down without cutting the calls that wait: once the gateway starts to close, every
// wait on the runtime (`job.get` and `agent.run` with `waitMs`, a form round) ends as if its
// deadline had come, so the call answers with the job's state as it stands, instead of the
// connection being cut under it (the client learned nothing, the audit line said `aborted`).

const DRAINED = Symbol('drained')

/**
 * `runtime` with waits that end when `drain` aborts: a pending `waitUntil` then resolves
 * `undefined` (what a deadline gives), and a new one resolves `undefined` at once. A wait ended
 * by its caller's own signal still rejects as before. Everything else is `runtime` itself.
 */
export function drainableRuntime(runtime: RuntimePort, drain: AbortSignal): RuntimePort {
  // Every pending wait listens to `drain` (up to `concurrentWaits` per credential): without this,
  // Node warns of a leak (MaxListenersExceededWarning) from the 11th wait on.
  setMaxListeners(0, drain)
  const waitUntil = <T>(
    sessionId: string,
    check: Parameters<RuntimePort['waitUntil']>[1],
    options: Parameters<RuntimePort['waitUntil']>[2],
  ): Promise<T | undefined> => {
    if (options.signal?.aborted) return Promise.reject(options.signal.reason)
    if (drain.aborted) return Promise.resolve(undefined)
    const local = new AbortController()
    const onDrain = (): void => local.abort(DRAINED)
    const onCaller = (): void => local.abort(options.signal?.reason)
    drain.addEventListener('abort', onDrain, { once: true })
    options.signal?.addEventListener('abort', onCaller, { once: true })
    return (
      runtime.waitUntil(sessionId, check, { ...options, signal: local.signal }) as Promise<T | undefined>
    )
      .catch((error: unknown) => {
        if (local.signal.reason === DRAINED) return undefined
        throw error
      })
      .finally(() => {
        drain.removeEventListener('abort', onDrain)
        options.signal?.removeEventListener('abort', onCaller)
      })
  }
  // Every other member is the runtime's own, called on the runtime itself (bound once each:
  // the port's methods are called on every request; a method replaced on the port is bound anew).
  const bound = new Map<PropertyKey, { of: unknown; method: unknown }>()
  return new Proxy(runtime, {
    get(target, property) {
      if (property === 'waitUntil') return waitUntil
      const value = Reflect.get(target, property, target)
      if (typeof value !== 'function') return value
      const known = bound.get(property)
      if (known !== undefined && known.of === value) return known.method
      const method = value.bind(target)
      bound.set(property, { of: value, method })
      return method
    },
  })
}
