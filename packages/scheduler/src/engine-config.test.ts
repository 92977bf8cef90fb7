import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { schedulerErrorOf, useTempDirs } from '../test/helpers.ts'
import { defaultEngineConfig, EngineConfigSchema, readEngineConfig } from './engine-config.ts'
import { schedulerPaths } from './paths.ts'

const tempDir = useTempDirs('sp-eng-')

function stackWith(config: unknown) {
  const paths = schedulerPaths(tempDir())
  mkdirSync(paths.akmDir, { recursive: true })
  writeFileSync(paths.engineConfig, typeof config === 'string' ? config : JSON.stringify(config))
  return paths
}

const withChange = (change: (config: ReturnType<typeof defaultEngineConfig>) => void) => {
  const config = defaultEngineConfig()
  change(config)
  return config
}

describe('engine configuration', () => {
  it('the default configuration is valid and points at the stack', async () => {
    expect(EngineConfigSchema.safeParse(defaultEngineConfig()).success).toBe(true)
    const paths = stackWith(defaultEngineConfig())
    expect(await readEngineConfig(paths)).toEqual({
      passwordFile: join(paths.stateDir, 'native-password'),
      agent: 'scheduled',
    })
  })

  it('an equivalent spelling of the same paths is accepted', async () => {
    const paths = stackWith(
      withChange((c) => {
        c.engine.passwordFile = '../akm/../../state/./native-password'
      }),
    )
    expect((await readEngineConfig(paths)).passwordFile).toBe(join(paths.stateDir, 'native-password'))
  })

  it.each([
    ['another password file', { engine: { passwordFile: '../../state/other' } }, 'passwordFile'],
    ['an absolute password file', { engine: { passwordFile: '/etc/shadow' } }, 'passwordFile'],
    ['another tasks source', { tasks: { source: '../../knowledge/other' } }, 'tasks.source'],
    ['another disabled dir', { tasks: { disabled: '../../knowledge/tasks' } }, 'tasks.disabled'],
  ])('refuses %s', async (_, patch, fragment) => {
    const base = defaultEngineConfig()
    const config = {
      ...base,
      engine: { ...base.engine, ...('engine' in patch && patch.engine) },
      tasks: { ...base.tasks, ...('tasks' in patch && patch.tasks) },
    }
    const error = await schedulerErrorOf(readEngineConfig(stackWith(config)))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toContain(fragment)
  })

  it.each([
    ['another agent', { engine: { agent: 'build' } }, 'engine.agent'],
    ['another engine kind', { engine: { kind: 'opencode-serve' } }, 'engine.kind'],
    ['another server', { engine: { server: 'remote' } }, 'engine.server'],
    ['an unknown engine key', { engine: { apiKey: 'x' } }, 'unknown key'],
    ['an unknown top-level key', { provider: {} }, 'unknown key'],
    ['version 2', { version: 2 }, 'version'],
  ])('refuses %s by schema', async (_, patch, fragment) => {
    const base = defaultEngineConfig()
    const config = {
      ...base,
      ...patch,
      ...('engine' in patch && { engine: { ...base.engine, ...patch.engine } }),
    }
    const error = await schedulerErrorOf(readEngineConfig(stackWith(config)))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toContain(fragment)
  })

  it('the default configuration activates no task: scheduler.enabled is an empty list', () => {
    expect(defaultEngineConfig().scheduler).toEqual({ enabled: [] })
    expect(defaultEngineConfig().scheduler).not.toBe(defaultEngineConfig().scheduler)
  })

  it('accepts a list of task ids in scheduler.enabled, and no scheduler key at all', async () => {
    const listed = withChange((c) => {
      c.scheduler = { enabled: ['daily', 'weekly.v2', 'a_b-c'] }
    })
    expect(EngineConfigSchema.parse(listed).scheduler).toEqual({ enabled: ['daily', 'weekly.v2', 'a_b-c'] })
    await expect(readEngineConfig(stackWith(listed))).resolves.toMatchObject({ agent: 'scheduled' })
    const { scheduler: _, ...bare } = defaultEngineConfig()
    expect(EngineConfigSchema.safeParse(bare).success).toBe(true)
    await expect(readEngineConfig(stackWith(bare))).resolves.toMatchObject({ agent: 'scheduled' })
    const full = withChange((c) => {
      c.scheduler = { enabled: Array.from({ length: 1000 }, (_, i) => `t${i}`) }
    })
    expect(EngineConfigSchema.safeParse(full).success).toBe(true)
  })

  it.each([
    ['enabled: true', { enabled: true }, 'scheduler.enabled'],
    ['enabled: false', { enabled: false }, 'scheduler.enabled'],
    ['an enabled string', { enabled: 'daily' }, 'scheduler.enabled'],
    ['a path as an id', { enabled: ['../x'] }, 'scheduler.enabled.0: must be a task id'],
    ['an id with a leading dot', { enabled: ['.hidden'] }, 'scheduler.enabled.0: must be a task id'],
    ['a non-string id', { enabled: [1] }, 'scheduler.enabled.0'],
    ['an unknown key in scheduler', { enabled: [], extra: 1 }, 'unknown key "extra"'],
    ['no enabled list', {}, 'scheduler.enabled'],
    ['more than 1000 ids', { enabled: Array.from({ length: 1001 }, (_, i) => `t${i}`) }, 'scheduler.enabled'],
    ['scheduler not an object', ['daily'], 'scheduler'],
  ])('refuses %s in scheduler by schema', async (_, scheduler, fragment) => {
    const config = { ...defaultEngineConfig(), scheduler }
    expect(EngineConfigSchema.safeParse(config).success).toBe(false)
    const error = await schedulerErrorOf(readEngineConfig(stackWith(config)))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message.startsWith('config/akm/config.json: ')).toBe(true)
    expect(error.message).toContain(fragment)
  })

  it('refuses invalid JSON and a missing file', async () => {
    expect((await schedulerErrorOf(readEngineConfig(stackWith('{')))).message).toContain('not valid JSON')
    const error = await schedulerErrorOf(readEngineConfig(schedulerPaths(tempDir())))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toContain('ENOENT')
  })
})
