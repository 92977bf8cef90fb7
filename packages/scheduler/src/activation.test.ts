import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { engineConfigWith, schedulerErrorOf, useTempDirs } from '../test/helpers.ts'
import { readEnabled, readHostSettings, setTaskEnabled } from './activation.ts'
import { type SchedulerPaths, schedulerPaths } from './paths.ts'
import { hostTimeZone } from './schedule.ts'

/** Lets one test make the atomic write fail (root ignores file modes, so a read-only dir cannot). */
const writeFailure = vi.hoisted(() => ({ error: undefined as unknown }))
vi.mock('./fs-util.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('./fs-util.ts')>()
  return {
    ...original,
    writeFileAtomic: async (...args: Parameters<typeof original.writeFileAtomic>) => {
      if (writeFailure.error !== undefined) throw writeFailure.error
      return original.writeFileAtomic(...args)
    },
  }
})
afterEach(() => {
  writeFailure.error = undefined
})

const tempDir = useTempDirs('sp-act-')

type Paths = Pick<SchedulerPaths, 'akmDir' | 'engineConfig' | 'stackConfig'>

const write = (path: string, value: unknown, mode = 0o600): void => {
  writeFileSync(path, typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`, { mode })
  chmodSync(path, mode)
}

/**
 * A stack with `config/akm/`; `engine` is written to config/akm/config.json and `stack` to
 * sallyport.json (a string as is, anything else as JSON; undefined: no file).
 */
function stack(engine?: unknown, stackConfig?: unknown, mode = 0o600): Paths {
  const paths = schedulerPaths(tempDir())
  mkdirSync(paths.akmDir, { recursive: true })
  if (engine !== undefined) write(paths.engineConfig, engine, mode)
  if (stackConfig !== undefined) write(paths.stackConfig, stackConfig)
  return paths
}

const UTC = { version: 1, assistant: { timezone: 'UTC' } }

describe('readHostSettings', () => {
  it('reads scheduler.enabled of config/akm/config.json and assistant.timezone of sallyport.json', async () => {
    const paths = stack(
      { ...engineConfigWith(), scheduler: { enabled: ['b', 'a', 'a'] } },
      { version: 1, assistant: { timezone: 'Europe/Berlin' } },
    )
    const settings = await readHostSettings(paths)
    expect([...settings.enabled].sort()).toEqual(['a', 'b'])
    expect(settings.timezone).toBe('Europe/Berlin')
  })

  it('ignores scheduler.enabled in sallyport.json (even true) and a time zone in config/akm/config.json', async () => {
    const paths = stack(
      { ...engineConfigWith(['a']), assistant: { timezone: 'Asia/Tokyo' } },
      { version: 1, assistant: { timezone: 'UTC' }, scheduler: { enabled: true } },
    )
    const settings = await readHostSettings(paths)
    expect([...settings.enabled]).toEqual(['a'])
    expect(settings.timezone).toBe('UTC')
    const old = stack(engineConfigWith(), { ...UTC, scheduler: { enabled: ['b'] } })
    expect((await readHostSettings(old)).enabled.size).toBe(0)
  })

  it.each([
    ['enabled absent', { scheduler: {} }],
    ['scheduler absent', { version: 1 }],
    ['enabled: [] (the default engine config)', engineConfigWith()],
  ])('%s means no task is active', async (_, value) => {
    expect((await readHostSettings(stack(value, UTC))).enabled.size).toBe(0)
  })

  it('a missing config/akm/config.json means no task; a missing sallyport.json the host time zone', async () => {
    const neither = await readHostSettings(stack())
    expect(neither.enabled.size).toBe(0)
    expect(neither.timezone).toBe(hostTimeZone())
    const onlyEngine = await readHostSettings(stack(engineConfigWith(['x'])))
    expect([...onlyEngine.enabled]).toEqual(['x'])
    expect(onlyEngine.timezone).toBe(hostTimeZone())
    const onlyStack = await readHostSettings(stack(undefined, { assistant: { timezone: 'Europe/Paris' } }))
    expect(onlyStack.enabled.size).toBe(0)
    expect(onlyStack.timezone).toBe('Europe/Paris')
  })

  it('no assistant.timezone means the host zone', async () => {
    expect((await readHostSettings(stack(engineConfigWith(), { assistant: {} }))).timezone).toBe(
      hostTimeZone(),
    )
  })

  it.each([
    ['enabled: true (would activate every source)', { scheduler: { enabled: true } }, 'true would activate'],
    ['enabled: false', { scheduler: { enabled: false } }, 'is a list of task ids'],
    ['an enabled string', { scheduler: { enabled: 'a' } }, 'list of task ids'],
    ['an invalid id in enabled', { scheduler: { enabled: ['ok', '../x'] } }, 'list of task ids'],
    ['a non-string id', { scheduler: { enabled: [1] } }, 'list of task ids'],
    ['scheduler not an object', { scheduler: ['a'] }, 'not an object'],
    ['invalid JSON', '{"version": 1,', 'not valid JSON'],
    ['a JSON array', '[]', 'not a JSON object'],
    ['JSON null', 'null', 'not a JSON object'],
  ])(
    'refuses %s in config/akm/config.json with ERR_SCHEDULER_CONFIG naming it',
    async (_, value, fragment) => {
      const error = await schedulerErrorOf(readHostSettings(stack(value, UTC)))
      expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
      expect(error.message).toContain(fragment)
      expect(error.message).toContain('config/akm/config.json')
      expect(error.message).not.toContain('sallyport.json')
    },
  )

  it.each([
    ['an invalid time zone', { assistant: { timezone: 'Mars/Olympus' } }, 'not an IANA time zone'],
    ['a non-string time zone', { assistant: { timezone: 1 } }, 'not an IANA time zone'],
    ['invalid JSON', '{"version": 1,', 'not valid JSON'],
    ['a JSON array', '[]', 'not a JSON object'],
  ])('refuses %s in sallyport.json with ERR_SCHEDULER_CONFIG naming it', async (_, value, fragment) => {
    const error = await schedulerErrorOf(readHostSettings(stack(engineConfigWith(), value)))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toContain(fragment)
    expect(error.message).toContain('sallyport.json')
    expect(error.message).not.toContain('config/akm/config.json')
  })

  it('an unreadable file (a directory) is ERR_SCHEDULER_CONFIG naming it', async () => {
    const engine = stack(undefined, UTC)
    mkdirSync(engine.engineConfig)
    const first = await schedulerErrorOf(readHostSettings(engine))
    expect(first.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(first.message).toMatch(/^cannot read config\/akm\/config\.json \(/)
    const host = stack(engineConfigWith())
    mkdirSync(host.stackConfig)
    const second = await schedulerErrorOf(readHostSettings(host))
    expect(second.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(second.message).toMatch(/^cannot read sallyport\.json \(/)
  })
})

describe('non-regular configuration files', () => {
  const fifo = (path: string): void => {
    const made = spawnSync('mkfifo', ['-m', '600', path])
    if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`)
  }

  it('a FIFO at config/akm/config.json is ERR_SCHEDULER_CONFIG at once (no hang), for every reader', async () => {
    const paths = stack(undefined, UTC)
    fifo(paths.engineConfig)
    const started = Date.now()
    for (const error of [
      await schedulerErrorOf(readHostSettings(paths)),
      await schedulerErrorOf(readEnabled(paths)),
      await schedulerErrorOf(setTaskEnabled(paths, 'a', true)),
      await schedulerErrorOf(setTaskEnabled(paths, 'a', false)),
    ]) {
      expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
      expect(error.message).toBe('cannot read config/akm/config.json (config.json is not a regular file)')
    }
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(statSync(paths.engineConfig).isFIFO()).toBe(true)
  })

  it('a FIFO at sallyport.json is ERR_SCHEDULER_CONFIG at once (no hang)', async () => {
    const paths = stack(engineConfigWith(['a']))
    fifo(paths.stackConfig)
    const error = await schedulerErrorOf(readHostSettings(paths))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toBe('cannot read sallyport.json (sallyport.json is not a regular file)')
    // readEnabled reads only config/akm/config.json.
    expect([...(await readEnabled(paths))]).toEqual(['a'])
  })

  it('a configuration file over 1 MiB is ERR_SCHEDULER_CONFIG', async () => {
    const paths = stack(`{"pad":"${'x'.repeat(1024 * 1024)}"}`, UTC)
    const error = await schedulerErrorOf(readEnabled(paths))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toContain('config/akm/config.json')
  })
})

describe('readEnabled', () => {
  it('reads scheduler.enabled only: a broken sallyport.json does not matter', async () => {
    const paths = stack(engineConfigWith(['b', 'a']), '{ not json')
    expect([...(await readEnabled(paths))].sort()).toEqual(['a', 'b'])
    expect((await readEnabled(stack(undefined, UTC))).size).toBe(0)
  })

  it('refuses a broken config/akm/config.json', async () => {
    const error = await schedulerErrorOf(readEnabled(stack({ scheduler: { enabled: true } }, UTC)))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
  })
})

describe('setTaskEnabled', () => {
  const full = {
    ...engineConfigWith(['m']),
    extra: { nested: { keep: [1, 2, 3] } },
    scheduler: { enabled: ['m'], other: 'kept' },
  }

  it('adds an id sorted and keeps every other key', async () => {
    const paths = stack(full, UTC)
    expect(await setTaskEnabled(paths, 'b', true)).toBe(true)
    expect(await setTaskEnabled(paths, 'z', true)).toBe(true)
    const after = JSON.parse(readFileSync(paths.engineConfig, 'utf8'))
    expect(after).toEqual({ ...full, scheduler: { enabled: ['b', 'm', 'z'], other: 'kept' } })
    expect(Object.keys(after)).toEqual(Object.keys(full))
    expect(readFileSync(paths.engineConfig, 'utf8').endsWith('}\n')).toBe(true)
  })

  it('removes an id and keeps every other key', async () => {
    const paths = stack(full, UTC)
    expect(await setTaskEnabled(paths, 'm', false)).toBe(true)
    expect(JSON.parse(readFileSync(paths.engineConfig, 'utf8'))).toEqual({
      ...full,
      scheduler: { enabled: [], other: 'kept' },
    })
  })

  it('adds scheduler.enabled when config/akm/config.json has no scheduler key', async () => {
    const { scheduler: _, ...bare } = engineConfigWith()
    const paths = stack(bare, UTC)
    expect(await setTaskEnabled(paths, 'a', true)).toBe(true)
    expect(JSON.parse(readFileSync(paths.engineConfig, 'utf8'))).toEqual(engineConfigWith(['a']))
  })

  it('never touches sallyport.json', async () => {
    const stackText = '{"version":1,"assistant":{"timezone":"UTC"},"scheduler":{"enabled":["old"]}}'
    const paths = stack(engineConfigWith(), stackText)
    await setTaskEnabled(paths, 'a', true)
    await setTaskEnabled(paths, 'old', true)
    await setTaskEnabled(paths, 'old', false)
    expect(readFileSync(paths.stackConfig, 'utf8')).toBe(stackText)
    expect(JSON.parse(readFileSync(paths.engineConfig, 'utf8')).scheduler).toEqual({ enabled: ['a'] })
  })

  it('returns false and does not rewrite the file when nothing changes', async () => {
    const paths = stack('{"scheduler":{"enabled":["m"]}}')
    const before = statSync(paths.engineConfig).mtimeMs
    expect(await setTaskEnabled(paths, 'm', true)).toBe(false)
    expect(await setTaskEnabled(paths, 'other', false)).toBe(false)
    expect(readFileSync(paths.engineConfig, 'utf8')).toBe('{"scheduler":{"enabled":["m"]}}')
    expect(statSync(paths.engineConfig).mtimeMs).toBe(before)
  })

  it('a missing config/akm/config.json is ERR_SCHEDULER_CONFIG (run `sallyport init`) and is not created', async () => {
    const paths = stack(undefined, UTC)
    for (const enabled of [true, false]) {
      const error = await schedulerErrorOf(setTaskEnabled(paths, 'a', enabled))
      expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
      expect(error.message).toBe('config/akm/config.json is missing: run `sallyport init`')
    }
    expect(existsSync(paths.engineConfig)).toBe(false)
    expect(readdirSync(paths.akmDir)).toEqual([])
  })

  it('keeps the file mode and leaves no temporary file', async () => {
    const paths = stack(full, UTC, 0o640)
    await setTaskEnabled(paths, 'x', true)
    expect(statSync(paths.engineConfig).mode & 0o777).toBe(0o640)
    await setTaskEnabled(paths, 'x', false)
    expect(statSync(paths.engineConfig).mode & 0o777).toBe(0o640)
    expect(readdirSync(paths.akmDir)).toEqual(['config.json'])
  })

  it.each([
    ['true', '{"scheduler":{"enabled":true}}'],
    ['false', '{"scheduler":{"enabled":false}}'],
  ])('refuses enabled: %s (either way) and leaves the file alone', async (_, text) => {
    const paths = stack(text, UTC)
    for (const enabled of [true, false]) {
      const error = await schedulerErrorOf(setTaskEnabled(paths, 'a', enabled))
      expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
      expect(error.message).toContain('scheduler.enabled in config/akm/config.json is a list of task ids')
    }
    expect(readFileSync(paths.engineConfig, 'utf8')).toBe(text)
  })

  it('refuses invalid JSON and leaves the file alone', async () => {
    const paths = stack('not json', UTC)
    const error = await schedulerErrorOf(setTaskEnabled(paths, 'a', true))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toBe('config/akm/config.json is not valid JSON')
    expect(readFileSync(paths.engineConfig, 'utf8')).toBe('not json')
  })

  it('a write failure is ERR_SCHEDULER_IO naming config/akm/config.json; the file is unchanged', async () => {
    const paths = stack(engineConfigWith(), UTC)
    const before = readFileSync(paths.engineConfig, 'utf8')
    writeFailure.error = Object.assign(new Error('no space'), { code: 'ENOSPC' })
    const error = await schedulerErrorOf(setTaskEnabled(paths, 'a', true))
    expect(error.code).toBe('ERR_SCHEDULER_IO')
    expect(error.message).toBe('cannot write config/akm/config.json (ENOSPC)')
    expect(readFileSync(paths.engineConfig, 'utf8')).toBe(before)
  })
})
