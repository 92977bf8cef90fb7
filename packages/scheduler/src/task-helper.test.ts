import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import {
  DEFAULT_STACK_CONFIG,
  enabledIds,
  engineConfigWith,
  fileTree,
  makeStack,
  readHostConfig,
  type StackOptions,
  schedulerErrorOf,
  useTempDirs,
  writeHostConfig,
  writeTask,
} from '../test/helpers.ts'
import { SchedulerError } from './errors.ts'
import type { SchedulerPaths } from './paths.ts'
import { createScheduler } from './scheduler.ts'
import { createTaskHelper, defaultOutput, idFromFileName, type Reconciler } from './task-helper.ts'
import { HOSTILE_CONTENT_GUIDANCE, parseTaskSource } from './task-source.ts'

const tempDir = useTempDirs('sp-helper-')

const NOW = new Date('2026-03-29T01:02:03.456Z')
const STAMP = '20260329T010203456Z'

function setup(reconcile?: Reconciler, stack: StackOptions = {}) {
  const paths = makeStack(tempDir(), stack)
  const helper = createTaskHelper({
    paths,
    now: () => NOW,
    lock: { timeoutMs: 2_000 },
    ...(reconcile && { reconcile }),
  })
  return { paths, helper }
}

/**
 * Everything a mutation may touch: the task sources, the backups, config/akm/ (config.json with
 * scheduler.enabled, no lock or temporary file left) and sallyport.json (never written).
 */
function snapshot(paths: SchedulerPaths) {
  return {
    tasks: fileTree(paths.tasksDir),
    disabled: fileTree(paths.disabledTasksDir),
    config: readFileSync(paths.engineConfig, 'utf8'),
    stack: readFileSync(paths.stackConfig, 'utf8'),
    akm: readdirSync(paths.akmDir),
  }
}

const failing: Reconciler = async () => {
  throw new Error('the scheduler refused')
}

describe('create', () => {
  it('writes the source with the guidance in front and activates its schedule', async () => {
    const { paths, helper } = setup()
    const result = await helper.create({
      id: 'daily',
      prompt: 'Summarise the notes.',
      schedule: '0 7 * * *',
      timeout: '90s',
    })
    expect(result).toMatchObject({ state: 'active', reconciled: 'deferred' })
    expect(result.task.prompt).toBe(`${HOSTILE_CONTENT_GUIDANCE}Summarise the notes.`)
    const text = readFileSync(join(paths.tasksDir, 'daily.yml'), 'utf8')
    const task = parseTaskSource('daily', text)
    expect(task).toMatchObject({ schedule: '0 7 * * *', timeoutSeconds: 90, prompt: result.task.prompt })
    expect(text).not.toContain('enabled')
    expect(enabledIds(paths)).toEqual(['daily'])
    expect(readdirSync(paths.akmDir)).toEqual(['config.json'])
  })

  it('does not add the guidance twice', async () => {
    const { helper } = setup()
    const result = await helper.create({ id: 'x', prompt: `${HOSTILE_CONTENT_GUIDANCE}Do it.` })
    expect(result.task.prompt).toBe(`${HOSTILE_CONTENT_GUIDANCE}Do it.`)
  })

  it('a manual task (no schedule) is not activated', async () => {
    const { paths, helper } = setup()
    expect((await helper.create({ id: 'manual', prompt: 'x' })).state).toBe('manual')
    expect(enabledIds(paths)).toEqual([])
  })

  it('paused: a scheduled task is written but not activated', async () => {
    const { paths, helper } = setup()
    expect((await helper.create({ id: 'later', prompt: 'x', schedule: '@daily', paused: true })).state).toBe(
      'paused',
    )
    expect(existsSync(join(paths.tasksDir, 'later.yml'))).toBe(true)
    expect(enabledIds(paths)).toEqual([])
  })

  it('keeps the other keys of config/akm/config.json and never writes sallyport.json', async () => {
    const stackText = `${JSON.stringify({ ...DEFAULT_STACK_CONFIG, gateway: { port: 1 } })}\n`
    const { paths, helper } = setup(undefined, {
      engineConfig: { ...engineConfigWith(), extra: { port: 1 }, scheduler: { enabled: ['b'], x: 1 } },
    })
    writeFileSync(paths.stackConfig, stackText)
    await helper.create({ id: 'a', prompt: 'x', schedule: '@daily' })
    expect(readHostConfig(paths)).toEqual({
      ...engineConfigWith(),
      extra: { port: 1 },
      scheduler: { enabled: ['a', 'b'], x: 1 },
    })
    expect(readFileSync(paths.stackConfig, 'utf8')).toBe(stackText)
  })

  it('creates knowledge/tasks when missing', async () => {
    const { paths, helper } = setup()
    rmSync(paths.tasksDir, { recursive: true })
    await helper.create({ id: 'a', prompt: 'x' })
    expect(existsSync(join(paths.tasksDir, 'a.yml'))).toBe(true)
  })

  it('never writes over an existing task (also a symlink)', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'taken', '', 'original')
    const before = snapshot(paths)
    expect(
      (await schedulerErrorOf(helper.create({ id: 'taken', prompt: 'new', schedule: '@daily' }))).code,
    ).toBe('ERR_SCHEDULER_EXISTS')
    expect(snapshot(paths)).toEqual(before)
    symlinkSync(join(paths.root, 'nowhere'), join(paths.tasksDir, 'link.yml'))
    expect((await schedulerErrorOf(helper.create({ id: 'link', prompt: 'x' }))).code).toBe(
      'ERR_SCHEDULER_EXISTS',
    )
    expect(existsSync(join(paths.root, 'nowhere'))).toBe(false)
  })

  it.each([
    ['an invalid id', { id: '../evil', prompt: 'x' }, 'ERR_SCHEDULER_INVALID_ID'],
    ['an empty prompt', { id: 'a', prompt: '   ' }, 'ERR_SCHEDULER_INVALID_TASK'],
    ['a six-field schedule', { id: 'a', prompt: 'x', schedule: '0 0 7 * * *' }, 'ERR_SCHEDULER_INVALID_TASK'],
    [
      'a never-firing schedule',
      { id: 'a', prompt: 'x', schedule: '0 0 31 2 *' },
      'ERR_SCHEDULER_INVALID_TASK',
    ],
    ['a short timeout', { id: 'a', prompt: 'x', timeout: '5s' }, 'ERR_SCHEDULER_INVALID_TASK'],
    ['a bad model', { id: 'a', prompt: 'x', model: 'gpt' }, 'ERR_SCHEDULER_INVALID_TASK'],
    ['a reserved output', { id: 'a', prompt: 'x', output: 'Secrets/x.md' }, 'ERR_SCHEDULER_INVALID_TASK'],
    ['an escaping output', { id: 'a', prompt: 'x', output: '../x.md' }, 'ERR_SCHEDULER_INVALID_TASK'],
    [
      'an output reserved once the id is filled in',
      { id: 'secrets', prompt: 'x', output: '{id}/x.md' },
      'ERR_SCHEDULER_INVALID_TASK',
    ],
    [
      'an output ending in .json once the id is filled in',
      { id: 'x.json', prompt: 'x', output: 'results/{id}' },
      'ERR_SCHEDULER_INVALID_TASK',
    ],
  ])('refuses %s and leaves no file', async (_, input, code) => {
    const reconcile = vi.fn<Reconciler>(async () => 'applied')
    const { paths, helper } = setup(reconcile)
    const before = snapshot(paths)
    expect((await schedulerErrorOf(helper.create(input))).code).toBe(code)
    expect(snapshot(paths)).toEqual(before)
    expect(reconcile).not.toHaveBeenCalled()
  })

  it('asks the reconciler with the id and reports applied', async () => {
    const reconcile = vi.fn<Reconciler>(async () => 'applied')
    const { helper } = setup(reconcile)
    expect((await helper.create({ id: 'a', prompt: 'x', schedule: '@daily' })).reconciled).toBe('applied')
    expect(reconcile).toHaveBeenCalledWith({ id: 'a', activates: true })
  })

  it('tells the reconciler whether the change activates: only an activated create, resume and restore do', async () => {
    const reconcile = vi.fn<Reconciler>(async () => 'applied')
    const { paths, helper } = setup(reconcile)
    await helper.create({ id: 'on', prompt: 'x', schedule: '@daily' })
    await helper.create({ id: 'held', prompt: 'x', schedule: '@daily', paused: true })
    await helper.create({ id: 'manual', prompt: 'x' })
    await helper.pause('on')
    await helper.resume('held')
    await helper.remove('held')
    const dir = join(paths.root, 'backup')
    mkdirSync(dir)
    writeFileSync(join(dir, 'back.yml'), 'version: 1\nprompt: x\n')
    await helper.restore(dir)
    expect(reconcile.mock.calls.map(([change]) => change)).toEqual([
      { id: 'on', activates: true },
      { id: 'held', activates: false },
      { id: 'manual', activates: false },
      { id: 'on', activates: false },
      { id: 'held', activates: true },
      { id: 'held', activates: false },
      { activates: true },
    ])
  })

  it('the reconciler sees the change on disk', async () => {
    let seen: { file: boolean; enabled: unknown } | undefined
    const paths = makeStack(tempDir())
    const helper = createTaskHelper({
      paths,
      reconcile: async () => {
        seen = { file: existsSync(join(paths.tasksDir, 'a.yml')), enabled: enabledIds(paths) }
        return 'applied'
      },
    })
    await helper.create({ id: 'a', prompt: 'x', schedule: '@daily' })
    expect(seen).toEqual({ file: true, enabled: ['a'] })
  })

  it('rolls back completely when the reconciler throws', async () => {
    const { paths, helper } = setup(failing)
    writeTask(paths, 'other')
    const before = snapshot(paths)
    const error = await schedulerErrorOf(helper.create({ id: 'a', prompt: 'x', schedule: '@daily' }))
    expect(error.code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(error.message).toContain('rolled back')
    expect(snapshot(paths)).toEqual(before)
  })

  it('passes a SchedulerError of the reconciler on unchanged', async () => {
    const refusal = new SchedulerError('ERR_SCHEDULER_RECONCILE', 'the scheduler refused a (bad)')
    const { paths, helper } = setup(async () => {
      throw refusal
    })
    const before = snapshot(paths)
    await expect(helper.create({ id: 'a', prompt: 'x' })).rejects.toBe(refusal)
    expect(snapshot(paths)).toEqual(before)
  })

  it('does not deactivate an id that was already active when rolling back', async () => {
    const { paths, helper } = setup(failing, { enabled: ['a'] })
    const before = snapshot(paths)
    await schedulerErrorOf(helper.create({ id: 'a', prompt: 'x', schedule: '@daily' }))
    expect(snapshot(paths)).toEqual(before)
  })

  it('removes the new file when config/akm/config.json cannot be updated', async () => {
    const { paths, helper } = setup()
    writeHostConfig(paths, { ...engineConfigWith(), scheduler: { enabled: true } })
    const error = await schedulerErrorOf(helper.create({ id: 'a', prompt: 'x', schedule: '@daily' }))
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toContain('config/akm/config.json')
    expect(existsSync(join(paths.tasksDir, 'a.yml'))).toBe(false)
  })

  it('removes the new file when config/akm/config.json is missing (run `sallyport init`)', async () => {
    const { paths, helper } = setup()
    rmSync(paths.engineConfig)
    // The activation is always written (also "not active" for a paused or manual task).
    for (const input of [
      { id: 'a', prompt: 'x', schedule: '@daily' },
      { id: 'held', prompt: 'x', schedule: '@daily', paused: true },
      { id: 'manual', prompt: 'x' },
    ]) {
      const error = await schedulerErrorOf(helper.create(input))
      expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
      expect(error.message).toContain('sallyport init')
    }
    expect(readdirSync(paths.tasksDir)).toEqual([])
    expect(existsSync(paths.engineConfig)).toBe(false)
  })

  it('create --paused clears a leftover scheduler.enabled entry of a source deleted by hand', async () => {
    const { paths, helper } = setup(undefined, { enabled: ['ghost', 'keep'] })
    writeTask(paths, 'keep', 'schedule: "@daily"\n')
    const result = await helper.create({ id: 'ghost', prompt: 'x', schedule: '* * * * *', paused: true })
    expect(result.state).toBe('paused')
    expect(enabledIds(paths)).toEqual(['keep'])
    expect((await helper.show('ghost')).state).toBe('paused')
    const scheduler = createScheduler({
      paths,
      run: async () => {
        throw new Error('must not run')
      },
      record: async () => {},
    })
    try {
      expect(await scheduler.sync()).toMatchObject({
        ok: true,
        bound: [{ id: 'keep' }],
        paused: ['ghost'],
      })
    } finally {
      await scheduler.stop()
    }
  })

  it('a manual create clears a leftover scheduler.enabled entry too', async () => {
    const { paths, helper } = setup(undefined, { enabled: ['ghost'] })
    expect((await helper.create({ id: 'ghost', prompt: 'x' })).state).toBe('manual')
    expect(enabledIds(paths)).toEqual([])
  })

  it('does not write sallyport.json even when it is missing', async () => {
    const { paths, helper } = setup()
    rmSync(paths.stackConfig)
    expect((await helper.create({ id: 'a', prompt: 'x', schedule: '@daily' })).state).toBe('active')
    expect(enabledIds(paths)).toEqual(['a'])
    expect(existsSync(paths.stackConfig)).toBe(false)
  })

  it('concurrent creates of one id: exactly one wins', async () => {
    const { paths, helper } = setup()
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => helper.create({ id: 'race', prompt: `p${i}`, schedule: '@daily' })),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(enabledIds(paths)).toEqual(['race'])
  })
})

describe('pause / resume', () => {
  it('toggle only scheduler.enabled', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'daily', 'schedule: "0 7 * * *"\n')
    const file = readFileSync(join(paths.tasksDir, 'daily.yml'), 'utf8')
    expect(await helper.resume('daily')).toEqual({ changed: true, reconciled: 'deferred' })
    expect(enabledIds(paths)).toEqual(['daily'])
    expect((await helper.show('daily')).state).toBe('active')
    expect(await helper.resume('daily')).toEqual({ changed: false, reconciled: 'deferred' })
    expect(await helper.pause('daily')).toEqual({ changed: true, reconciled: 'deferred' })
    expect(enabledIds(paths)).toEqual([])
    expect((await helper.show('daily')).state).toBe('paused')
    expect(await helper.pause('daily')).toEqual({ changed: false, reconciled: 'deferred' })
    expect(readFileSync(join(paths.tasksDir, 'daily.yml'), 'utf8')).toBe(file)
    expect(readHostConfig(paths)).toEqual(engineConfigWith())
  })

  it('resume refuses a manual task, a missing one, an invalid one and an invalid id', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'manual')
    writeTask(paths, 'broken', 'enabled: true\n')
    expect((await schedulerErrorOf(helper.resume('manual'))).message).toContain('no schedule')
    expect((await schedulerErrorOf(helper.resume('missing'))).code).toBe('ERR_SCHEDULER_NOT_FOUND')
    expect((await schedulerErrorOf(helper.resume('broken'))).code).toBe('ERR_SCHEDULER_INVALID_TASK')
    expect((await schedulerErrorOf(helper.resume('../x'))).code).toBe('ERR_SCHEDULER_INVALID_ID')
    expect(enabledIds(paths)).toEqual([])
  })

  it('pause works for a missing or invalid source (it only touches activation)', async () => {
    const { paths, helper } = setup(undefined, { enabled: ['gone', 'keep'] })
    expect((await helper.pause('gone')).changed).toBe(true)
    expect(enabledIds(paths)).toEqual(['keep'])
    expect((await schedulerErrorOf(helper.pause('bad/id'))).code).toBe('ERR_SCHEDULER_INVALID_ID')
  })

  it('both roll back when the reconciler throws', async () => {
    const { paths, helper } = setup(failing, { enabled: ['on'] })
    writeTask(paths, 'on', 'schedule: "@daily"\n')
    writeTask(paths, 'off', 'schedule: "@daily"\n')
    const before = snapshot(paths)
    expect((await schedulerErrorOf(helper.pause('on'))).code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(snapshot(paths)).toEqual(before)
    expect((await schedulerErrorOf(helper.resume('off'))).code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(snapshot(paths)).toEqual(before)
  })
})

describe('remove', () => {
  it('moves the source to knowledge/disabled-tasks/<id>-<stamp>.yml and drops its activation', async () => {
    const { paths, helper } = setup(undefined, { enabled: ['daily', 'other'] })
    writeTask(paths, 'daily', 'schedule: "@daily"\n')
    const text = readFileSync(join(paths.tasksDir, 'daily.yml'), 'utf8')
    const result = await helper.remove('daily')
    expect(result).toEqual({ backup: `daily-${STAMP}.yml`, reconciled: 'deferred' })
    expect(existsSync(join(paths.tasksDir, 'daily.yml'))).toBe(false)
    expect(readFileSync(join(paths.disabledTasksDir, result.backup), 'utf8')).toBe(text)
    expect(enabledIds(paths)).toEqual(['other'])
    expect(idFromFileName(result.backup)).toBe('daily')
  })

  it('refuses a missing task and an existing backup name', async () => {
    const { paths, helper } = setup()
    expect((await schedulerErrorOf(helper.remove('missing'))).code).toBe('ERR_SCHEDULER_NOT_FOUND')
    writeTask(paths, 'daily')
    mkdirSync(paths.disabledTasksDir)
    writeFileSync(join(paths.disabledTasksDir, `daily-${STAMP}.yml`), 'older')
    const before = snapshot(paths)
    expect((await schedulerErrorOf(helper.remove('daily'))).code).toBe('ERR_SCHEDULER_EXISTS')
    expect(snapshot(paths)).toEqual(before)
  })

  it('removes an invalid source too', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'broken', 'enabled: true\n')
    expect((await helper.remove('broken')).backup).toBe(`broken-${STAMP}.yml`)
    expect(readdirSync(paths.tasksDir)).toEqual([])
  })

  it('rolls back completely when the reconciler throws', async () => {
    const { paths, helper } = setup(failing, { enabled: ['daily'] })
    writeTask(paths, 'daily', 'schedule: "@daily"\n')
    const before = snapshot(paths)
    expect((await schedulerErrorOf(helper.remove('daily'))).code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(snapshot(paths)).toEqual(before)
  })
})

describe('restore', () => {
  function backupDir(paths: SchedulerPaths, files: Record<string, string>): string {
    const dir = join(paths.root, 'backup')
    mkdirSync(dir, { recursive: true })
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
    return dir
  }
  const scheduled = 'version: 1\nschedule: "0 7 * * *"\nprompt: Do it.\n'

  it('stages valid sources PAUSED, with the guidance, even when the id was listed in scheduler.enabled', async () => {
    const { paths, helper } = setup(undefined, { enabled: ['a', 'keep'] })
    const dir = backupDir(paths, {
      'a.yml': scheduled,
      [`b-${STAMP}.yml`]: 'version: 1\nprompt: Manual.\ntimeout: 90\n',
    })
    const result = await helper.restore(dir)
    expect(result.refused).toEqual([])
    expect(result.reconciled).toBe('deferred')
    // Newest (by name) first.
    expect(result.staged.map((task) => task.id)).toEqual(['b', 'a'])
    expect(enabledIds(paths)).toEqual(['keep'])
    const listing = await helper.list()
    expect(listing.tasks.map((view) => [view.task.id, view.state])).toEqual([
      ['a', 'paused'],
      ['b', 'manual'],
    ])
    const a = parseTaskSource('a', readFileSync(join(paths.tasksDir, 'a.yml'), 'utf8'))
    expect(a.prompt).toBe(`${HOSTILE_CONTENT_GUIDANCE}Do it.`)
    expect(a.schedule).toBe('0 7 * * *')
    expect(parseTaskSource('b', readFileSync(join(paths.tasksDir, 'b.yml'), 'utf8')).timeoutSeconds).toBe(90)
  })

  it('restores a single backup file by its backup name', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'daily', 'schedule: "@daily"\n')
    await helper.resume('daily')
    const { backup } = await helper.remove('daily')
    const result = await helper.restore(join(paths.disabledTasksDir, backup))
    expect(result.staged.map((task) => task.id)).toEqual(['daily'])
    expect((await helper.show('daily')).state).toBe('paused')
  })

  it('refuses invalid files, existing ids, duplicate ids and bad names; stages the rest', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'taken', '', 'mine')
    const takenBefore = readFileSync(join(paths.tasksDir, 'taken.yml'), 'utf8')
    const dir = backupDir(paths, {
      'good.yml': scheduled,
      'taken.yml': scheduled,
      'bad.yml': 'version: 1\nprompt: x\nenabled: true\n',
      'dup-20260101T000000000Z.yml': scheduled,
      'dup.yml': scheduled,
      '-nope.yml': scheduled,
      'notes.txt': 'ignored',
      '.hidden.yml': scheduled,
    })
    const result = await helper.restore(dir)
    expect(result.staged.map((task) => task.id)).toEqual(['good', 'dup'])
    // The files are taken newest (by name) first: of the two of `dup`, dup.yml sorts after the backup.
    expect(result.refused.map(({ file, id }) => ({ file, id }))).toEqual([
      { file: 'taken.yml', id: 'taken' },
      { file: 'dup-20260101T000000000Z.yml', id: 'dup' },
      { file: 'bad.yml', id: 'bad' },
      { file: '-nope.yml', id: undefined },
    ])
    expect(result.refused.find((r) => r.id === 'dup')?.problem).toContain('same id')
    expect(result.refused.find((r) => r.id === 'taken')?.problem).toContain('exists already')
    expect(readFileSync(join(paths.tasksDir, 'taken.yml'), 'utf8')).toBe(takenBefore)
    expect(readdirSync(paths.tasksDir).sort()).toEqual(['dup.yml', 'good.yml', 'taken.yml'])
    expect(enabledIds(paths)).toEqual([])
  })

  it('of two backups of one id, stages the newest (by the time in the name) and refuses the older', async () => {
    const { paths, helper } = setup()
    const dir = backupDir(paths, {
      'x-20260301T000000000Z.yml': 'version: 1\nprompt: Newest.\n',
      'x-20251231T235959999Z.yml': 'version: 1\nprompt: Oldest.\n',
      'x-20260115T120000000Z.yml': 'version: 1\nprompt: Middle.\n',
    })
    const result = await helper.restore(dir)
    expect(result.staged.map((task) => [task.id, task.prompt])).toEqual([
      ['x', `${HOSTILE_CONTENT_GUIDANCE}Newest.`],
    ])
    expect(result.refused).toEqual([
      { file: 'x-20260115T120000000Z.yml', id: 'x', problem: 'another file of this restore has the same id' },
      { file: 'x-20251231T235959999Z.yml', id: 'x', problem: 'another file of this restore has the same id' },
    ])
    expect(parseTaskSource('x', readFileSync(join(paths.tasksDir, 'x.yml'), 'utf8')).prompt).toBe(
      `${HOSTILE_CONTENT_GUIDANCE}Newest.`,
    )
  })

  it('refuses a symlinked file in the backup', async () => {
    const { paths, helper } = setup()
    const dir = backupDir(paths, {})
    writeFileSync(join(paths.root, 'real.yml'), scheduled)
    symlinkSync(join(paths.root, 'real.yml'), join(dir, 'link.yml'))
    const result = await helper.restore(dir)
    expect(result.staged).toEqual([])
    expect(result.refused).toEqual([{ file: 'link.yml', id: 'link', problem: 'link.yml is a symbolic link' }])
  })

  it('a missing backup is ERR_SCHEDULER_NOT_FOUND', async () => {
    const { paths, helper } = setup()
    expect((await schedulerErrorOf(helper.restore(join(paths.root, 'none')))).code).toBe(
      'ERR_SCHEDULER_NOT_FOUND',
    )
  })

  it('rolls back completely when the reconciler throws (files and re-activation)', async () => {
    const { paths, helper } = setup(failing, { enabled: ['a'] })
    const dir = backupDir(paths, { 'a.yml': scheduled, 'b.yml': scheduled })
    const before = snapshot(paths)
    expect((await schedulerErrorOf(helper.restore(dir))).code).toBe('ERR_SCHEDULER_RECONCILE')
    expect(snapshot(paths)).toEqual(before)
  })
})

describe('validate / list / show', () => {
  it('validates every source, one id, or a file path', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'good')
    writeTask(paths, 'bad', 'timeout: 1s\n')
    writeFileSync(join(paths.tasksDir, 'wrong.yaml'), 'version: 1\nprompt: x\n')
    const all = await helper.validate()
    expect(all.valid.map((task) => task.id)).toEqual(['good'])
    expect(all.invalid.map((entry) => entry.file)).toEqual(['bad.yml', 'wrong.yaml'])

    expect((await helper.validate('good')).valid.map((task) => task.id)).toEqual(['good'])
    const bad = await helper.validate('bad')
    expect(bad.valid).toEqual([])
    expect(bad.invalid).toEqual([{ file: 'bad.yml', id: 'bad', problem: expect.stringContaining('timeout') }])
    expect((await helper.validate('missing')).invalid[0]?.problem).toBe('no task missing')

    const copy = join(paths.root, `good-${STAMP}.yml`)
    copyFileSync(join(paths.tasksDir, 'good.yml'), copy)
    expect((await helper.validate(copy)).valid.map((task) => task.id)).toEqual(['good'])
    const odd = join(paths.root, 'notes.txt')
    writeFileSync(odd, 'x')
    expect((await helper.validate(odd)).invalid[0]?.problem).toContain('not <task id>.yml')
  })

  it('validate refuses an invalid id (not a path)', async () => {
    const { helper } = setup()
    expect((await schedulerErrorOf(helper.validate('bad id'))).code).toBe('ERR_SCHEDULER_INVALID_ID')
  })

  it('validate changes nothing', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'good', 'schedule: "@daily"\n')
    const before = snapshot(paths)
    await helper.validate()
    await helper.validate('good')
    expect(snapshot(paths)).toEqual(before)
  })

  it('list shows each state, the invalid files and the time zone', async () => {
    const { paths, helper } = setup(undefined, {
      enabled: ['on'],
      stackConfig: { version: 1, assistant: { timezone: 'Europe/Berlin' } },
    })
    writeTask(paths, 'on', 'schedule: "@daily"\n')
    writeTask(paths, 'off', 'schedule: "@daily"\n')
    writeTask(paths, 'manual')
    writeTask(paths, 'broken', 'nope: 1\n')
    const listing = await helper.list()
    expect(listing.timezone).toBe('Europe/Berlin')
    expect(listing.tasks.map((view) => [view.task.id, view.state])).toEqual([
      ['manual', 'manual'],
      ['off', 'paused'],
      ['on', 'active'],
    ])
    expect(listing.invalid.map((entry) => entry.id)).toEqual(['broken'])
  })

  it('show reads one task with its state and the time zone', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'one', 'schedule: "@daily"\n')
    expect(await helper.show('one')).toMatchObject({ task: { id: 'one' }, state: 'paused', timezone: 'UTC' })
    expect((await schedulerErrorOf(helper.show('two'))).code).toBe('ERR_SCHEDULER_NOT_FOUND')
  })

  it('a broken config/akm/config.json fails list and show with ERR_SCHEDULER_CONFIG', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'one')
    writeHostConfig(paths, { ...engineConfigWith(), scheduler: { enabled: true } })
    for (const error of [await schedulerErrorOf(helper.list()), await schedulerErrorOf(helper.show('one'))]) {
      expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
      expect(error.message).toContain('config/akm/config.json')
    }
  })

  it('a broken sallyport.json fails list with ERR_SCHEDULER_CONFIG naming it', async () => {
    const { paths, helper } = setup()
    writeFileSync(paths.stackConfig, '{ not json')
    const error = await schedulerErrorOf(helper.list())
    expect(error.code).toBe('ERR_SCHEDULER_CONFIG')
    expect(error.message).toBe('sallyport.json is not valid JSON')
  })

  it('pause and resume on a missing config/akm/config.json are ERR_SCHEDULER_CONFIG and create nothing', async () => {
    const { paths, helper } = setup()
    writeTask(paths, 'daily', 'schedule: "@daily"\n')
    rmSync(paths.engineConfig)
    expect((await schedulerErrorOf(helper.resume('daily'))).code).toBe('ERR_SCHEDULER_CONFIG')
    expect((await schedulerErrorOf(helper.pause('daily'))).code).toBe('ERR_SCHEDULER_CONFIG')
    expect(readdirSync(paths.akmDir)).toEqual([])
  })
})

describe('idFromFileName / defaultOutput', () => {
  it.each([
    ['daily.yml', 'daily'],
    [`daily-${STAMP}.yml`, 'daily'],
    [`my-task-${STAMP}.yml`, 'my-task'],
    ['daily-2026.yml', 'daily-2026'],
    ['daily.yaml', undefined],
    ['.yml', undefined],
    ['-x.yml', undefined],
    [`-${STAMP}.yml`, undefined],
    ['daily', undefined],
  ])('%j → %j', (name, id) => {
    expect(idFromFileName(name)).toBe(id)
  })

  it('defaultOutput', () => {
    expect(defaultOutput({ output: undefined })).toBe('task-results/{id}/{run}.md')
    expect(defaultOutput({ output: 'x.md' })).toBe('x.md')
  })
})
