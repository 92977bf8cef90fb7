import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'

// The CLI's gateway side (`up`, `serve`, `init` and every command through the exit codes) loads
// `@sallyport/scheduler/stack`: loading it must not load the daemon, the task sources (yaml), the
// schedule engine (croner), zod or the runtime client. Each of them is a trap here; the last test
// proves the traps fire.
const { trap } = vi.hoisted(() => ({
  trap: (name: string) => () => {
    throw new Error(`the stack module loaded ${name}`)
  },
}))
vi.mock('yaml', trap('yaml'))
vi.mock('croner', trap('croner'))
vi.mock('zod', trap('zod'))
vi.mock('@sallyport/runtime-guard', trap('@sallyport/runtime-guard'))
vi.mock('@sallyport/runtime-process', trap('@sallyport/runtime-process'))
vi.mock('@sallyport/upstream-client', trap('@sallyport/upstream-client'))

const exported = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).exports

describe('@sallyport/scheduler/stack', () => {
  it('is a subpath of the package: the built file, and its source for tests', () => {
    expect(exported['./stack']).toEqual({
      types: './dist/stack.d.ts',
      '@sallyport/source': './src/stack.ts',
      import: './dist/stack.js',
    })
  })

  it('loads with Node built-ins alone: no daemon, yaml, croner, zod or runtime client', async () => {
    const stack: typeof import('./stack.ts') = await import(
      join(import.meta.dirname, '..', exported['./stack']['@sallyport/source'])
    )
    expect(stack.isTimeZone('Europe/Berlin')).toBe(true)
    expect(stack.isTimeZone('Mars/Olympus')).toBe(false)
    expect(stack.defaultEngineConfig().engine.agent).toBe('scheduled')
    expect(stack.schedulerPaths('/s').stackConfig).toBe(`/s/${stack.STACK_CONFIG_FILE}`)
    expect(stack.parseStackEnv(`A=${stack.quoteStackEnvValue("it's")}`).get('A')).toBe("it's")
    expect(stack.SchedulerError.isInstance(new stack.SchedulerError('ERR_SCHEDULER_IO', 'x'))).toBe(true)
    expect(stack.tasksPluginWrapperSource()).toContain(stack.TASKS_MODULE_ENV)
    expect(typeof stack.askScheduler).toBe('function')
  })

  it('(the traps fire: the schedule engine, the task sources and the daemon do load them)', async () => {
    // vitest wraps what a mock factory throws; the trap's own error is its cause.
    const failure = (loading: Promise<unknown>) =>
      loading.then(
        () => 'loaded',
        (error: Error) => `${error.message} / ${(error.cause as Error | undefined)?.message}`,
      )
    expect(await failure(import('./schedule.ts'))).toMatch(/loaded croner/)
    expect(await failure(import('./task-source.ts'))).toMatch(/loaded yaml/)
    expect(await failure(import('./engine-config.ts'))).toMatch(/loaded (yaml|zod)/)
    expect(await failure(import('./daemon.ts'))).toMatch(/the stack module loaded/)
  })
})
