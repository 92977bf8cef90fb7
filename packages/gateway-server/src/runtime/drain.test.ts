import { describe, expect, it } from 'vitest'
import { drainableRuntime } from './drain.js'
import type { RuntimePort } from './port.js'

/** A port whose waits last until their signal aborts (rejecting with its reason), like the real one. */
function waitingPort() {
  let healthyCalls = 0
  const given: Array<{ timeoutMs: number; signal?: AbortSignal; afterBurst?: boolean }> = []
  const port = {
    waitUntil: (_id: string, _check: unknown, options: (typeof given)[number]) =>
      new Promise((_, reject) => {
        given.push(options)
        options.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true })
      }),
    async healthy() {
      healthyCalls++
      return this === port
    },
  } as unknown as RuntimePort
  return { port, healthyCalls: () => healthyCalls, given }
}

describe('drainableRuntime', () => {
  it('ends pending and later waits with undefined once draining starts', async () => {
    const drain = new AbortController()
    const runtime = drainableRuntime(waitingPort().port, drain.signal)
    const pending = runtime.waitUntil('s', async () => undefined, { timeoutMs: 60_000 })
    drain.abort()
    expect(await pending).toBeUndefined()
    expect(await runtime.waitUntil('s', async () => undefined, { timeoutMs: 60_000 })).toBeUndefined()
  })

  it("still rejects a wait its caller's signal ended, and passes everything else through", async () => {
    const drain = new AbortController()
    const { port, healthyCalls } = waitingPort()
    const runtime = drainableRuntime(port, drain.signal)
    const caller = new AbortController()
    const wait = runtime.waitUntil('s', async () => undefined, { timeoutMs: 60_000, signal: caller.signal })
    caller.abort(new Error('client left'))
    await expect(wait).rejects.toThrow('client left')
    const already = AbortSignal.abort(new Error('gone'))
    await expect(
      runtime.waitUntil('s', async () => undefined, { timeoutMs: 1, signal: already }),
    ).rejects.toThrow('gone')
    expect(await runtime.healthy()).toBe(true) // called on the port itself
    expect(healthyCalls()).toBe(1)
  })

  it("hands the wait's options to the port (its own signal in place of the caller's)", async () => {
    const drain = new AbortController()
    const { port, given } = waitingPort()
    const runtime = drainableRuntime(port, drain.signal)
    const wait = runtime.waitUntil('s', async () => undefined, { timeoutMs: 1234, afterBurst: true })
    expect(given[0]).toMatchObject({ timeoutMs: 1234, afterBurst: true })
    expect(given[0]?.signal).toBeInstanceOf(AbortSignal)
    drain.abort()
    expect(await wait).toBeUndefined()
  })
})

describe('drainableRuntime methods', () => {
  it('binds each method once, and anew when the port replaces it', async () => {
    const { port } = waitingPort()
    const runtime = drainableRuntime(port, new AbortController().signal)
    expect(runtime.healthy).toBe(runtime.healthy)
    const before = runtime.healthy
    ;(port as { healthy: () => Promise<boolean> }).healthy = async () => false
    expect(runtime.healthy).not.toBe(before)
    expect(await runtime.healthy()).toBe(false)
  })

  it('lets any number of waits listen to the drain without a leak warning', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error): void => void warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      const drain = new AbortController()
      const runtime = drainableRuntime(waitingPort().port, drain.signal)
      const waits = Array.from({ length: 50 }, () =>
        runtime.waitUntil('s', async () => undefined, { timeoutMs: 60_000 }),
      )
      drain.abort()
      expect(await Promise.all(waits)).toEqual(waits.map(() => undefined))
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).not.toContain('MaxListenersExceededWarning')
    } finally {
      process.off('warning', onWarning)
    }
  })
})
