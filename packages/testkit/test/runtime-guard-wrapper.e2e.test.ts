import { RUNTIME_GUARD_EXIT_CODE } from '@sallyport/runtime-guard'
import { afterEach, describe, expect, it } from 'vitest'
import { type RuntimeHandle, startRuntime, waitFor } from '../src/index.ts'

// The runtime only logs a plugin that fails to load and goes on without it. The stack's wrapper
// must turn that into a stop, or remote credentials would be served unguarded.

let runtime: RuntimeHandle | undefined
afterEach(async () => {
  await runtime?.stop()
  runtime = undefined
})

describe('the runtime guard wrapper fails closed', () => {
  it.each([
    ['no module named', undefined],
    ['a module that does not exist', '/nonexistent/sallyport/plugin.js'],
    ['a relative module path', 'dist/plugin.js'],
  ])('%s: the runtime exits at its first workspace request', async (_name, module) => {
    runtime = await startRuntime({ env: { SALLYPORT_RUNTIME_GUARD_MODULE: module } })
    const started = runtime
    // Plugins load with the first request bound to the workspace instance.
    await started.fetch(`/session?directory=${encodeURIComponent(started.directory)}`).catch(() => undefined)
    await waitFor(() => started.exited, { timeoutMs: 20_000 })
    expect(await started.exitCode).toBe(RUNTIME_GUARD_EXIT_CODE)
    expect(started.logs()).toContain('runtime guard not loaded: stopping')
  })

  it('with the module named the same request is served', async () => {
    runtime = await startRuntime()
    const res = await runtime.fetch(`/session?directory=${encodeURIComponent(runtime.directory)}`)
    expect(res.status).toBe(200)
    expect(runtime.exited).toBe(false)
  })
})
