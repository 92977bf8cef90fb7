import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeStack, schedulerErrorOf, useTempDirs, writeTask } from '../test/helpers.ts'
import { SchedulerError } from './errors.ts'
import { schedulerPaths } from './paths.ts'
import { MAX_TASK_FILES, printable, problemOf, readTaskCatalog, readTaskFile } from './task-files.ts'
import { MAX_TASK_SOURCE_BYTES } from './task-source.ts'

const tempDir = useTempDirs('sp-files-')

describe('readTaskCatalog', () => {
  it('a missing tasks directory is an empty catalog', async () => {
    expect(await readTaskCatalog(schedulerPaths(tempDir()))).toEqual({ tasks: [], invalid: [] })
  })

  it('reads every valid .yml, sorted by file name', async () => {
    const paths = makeStack(tempDir())
    writeTask(paths, 'b', 'schedule: "@daily"\n')
    writeTask(paths, 'a')
    const catalog = await readTaskCatalog(paths)
    expect(catalog.tasks.map((task) => task.id)).toEqual(['a', 'b'])
    expect(catalog.tasks[1]?.schedule).toBe('@daily')
    expect(catalog.invalid).toEqual([])
  })

  it('an invalid task next to a valid one is reported and does not hide it', async () => {
    const paths = makeStack(tempDir())
    writeTask(paths, 'good')
    writeTask(paths, 'bad', 'enabled: true\n')
    writeTask(paths, 'worse', 'schedule: "61 * * * *"\n')
    const catalog = await readTaskCatalog(paths)
    expect(catalog.tasks.map((task) => task.id)).toEqual(['good'])
    expect(catalog.invalid.map(({ file, id }) => ({ file, id }))).toEqual([
      { file: 'bad.yml', id: 'bad' },
      { file: 'worse.yml', id: 'worse' },
    ])
    expect(catalog.invalid[0]?.problem).toContain('scheduler.enabled')
    expect(catalog.invalid[1]?.problem).toContain('schedule')
  })

  it('reports a .yaml file and a file name that is not an id; skips dot files and other files', async () => {
    const paths = makeStack(tempDir())
    writeTask(paths, 'good')
    writeFileSync(join(paths.tasksDir, 'other.yaml'), 'version: 1\nprompt: x\n')
    writeFileSync(join(paths.tasksDir, '-bad id.yml'), 'version: 1\nprompt: x\n')
    writeFileSync(join(paths.tasksDir, '.hidden.yml'), 'garbage: [')
    writeFileSync(join(paths.tasksDir, '.good.yml.1a2b.tmp'), 'garbage')
    writeFileSync(join(paths.tasksDir, 'README.md'), '# tasks')
    const catalog = await readTaskCatalog(paths)
    expect(catalog.tasks.map((task) => task.id)).toEqual(['good'])
    expect(catalog.invalid).toEqual([
      { file: '-bad id.yml', problem: 'the file name is not a valid task id' },
      { file: 'other.yaml', problem: 'task sources end in .yml; this file is ignored' },
    ])
  })

  it('refuses a symlinked task file (even to a valid source)', async () => {
    const root = tempDir()
    const paths = makeStack(root)
    const outside = join(root, 'outside.yml')
    writeFileSync(outside, 'version: 1\nprompt: x\n')
    symlinkSync(outside, join(paths.tasksDir, 'linked.yml'))
    const catalog = await readTaskCatalog(paths)
    expect(catalog.tasks).toEqual([])
    expect(catalog.invalid).toEqual([
      { file: 'linked.yml', id: 'linked', problem: 'linked.yml is a symbolic link' },
    ])
  })

  it('refuses a directory named like a task and a file over 1 MiB', async () => {
    const paths = makeStack(tempDir())
    mkdirSync(join(paths.tasksDir, 'dir.yml'))
    writeFileSync(
      join(paths.tasksDir, 'big.yml'),
      `version: 1\nprompt: x\n#${'a'.repeat(MAX_TASK_SOURCE_BYTES)}\n`,
    )
    const catalog = await readTaskCatalog(paths)
    expect(catalog.invalid).toEqual([
      { file: 'big.yml', id: 'big', problem: `larger than ${MAX_TASK_SOURCE_BYTES} bytes` },
      { file: 'dir.yml', id: 'dir', problem: 'dir.yml is not a regular file' },
    ])
  })

  it('makes file names printable in reports', async () => {
    const paths = makeStack(tempDir())
    writeFileSync(join(paths.tasksDir, 'tâche\u0007.yml'), 'version: 1\nprompt: x\n')
    const catalog = await readTaskCatalog(paths)
    expect(catalog.invalid).toHaveLength(1)
    expect(catalog.invalid[0]?.file).toMatch(/^[\x20-\x7e]+$/)
  })

  it(`stops after ${MAX_TASK_FILES} task files with one problem`, async () => {
    const paths = makeStack(tempDir())
    for (let i = 0; i <= MAX_TASK_FILES; i++)
      writeFileSync(join(paths.tasksDir, `t${String(i).padStart(4, '0')}.yml`), 'version: 1\nprompt: x\n')
    const catalog = await readTaskCatalog(paths)
    expect(catalog.tasks).toHaveLength(MAX_TASK_FILES)
    expect(catalog.invalid).toEqual([
      {
        file: `t${String(MAX_TASK_FILES).padStart(4, '0')}.yml`,
        problem: `more than ${MAX_TASK_FILES} task files; the rest are ignored`,
      },
    ])
  })

  it('an unreadable tasks path is ERR_SCHEDULER_IO', async () => {
    const root = tempDir()
    const paths = schedulerPaths(root)
    mkdirSync(join(root, 'knowledge'))
    writeFileSync(paths.tasksDir, 'not a directory')
    expect((await schedulerErrorOf(readTaskCatalog(paths))).code).toBe('ERR_SCHEDULER_IO')
  })
})

describe('readTaskFile', () => {
  it('reads one task and refuses a missing one with ERR_SCHEDULER_NOT_FOUND', async () => {
    const paths = makeStack(tempDir())
    const path = writeTask(paths, 'one', 'timeout: 90s\n')
    expect((await readTaskFile(path, 'one')).timeoutSeconds).toBe(90)
    expect((await schedulerErrorOf(readTaskFile(join(paths.tasksDir, 'two.yml'), 'two'))).code).toBe(
      'ERR_SCHEDULER_NOT_FOUND',
    )
  })
})

describe('problemOf / printable', () => {
  it('uses the message of a SchedulerError and only the code of anything else', () => {
    expect(problemOf(new SchedulerError('ERR_SCHEDULER_IO', 'x is bad'))).toBe('x is bad')
    expect(problemOf(Object.assign(new Error('/secret/path'), { code: 'EACCES' }))).toBe(
      'cannot be read (EACCES)',
    )
    expect(problemOf('weird')).toBe('cannot be read (error)')
  })

  it('keeps the base name, printable, at most 80 characters', () => {
    expect(printable('/a/b/c.yml')).toBe('c.yml')
    expect(printable('é\n.yml')).toBe('??.yml')
    expect(printable('x'.repeat(100))).toBe(`${'x'.repeat(80)}…`)
  })
})
