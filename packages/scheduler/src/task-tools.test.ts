import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { enabledIds, makeStack, useTempDirs, writeEnabled, writeTask } from '../test/helpers.ts'
import { SchedulerError } from './errors.ts'
import { appendHistory } from './history.ts'
import { createTaskHelper } from './task-helper.ts'
import { HOSTILE_CONTENT_GUIDANCE, parseTaskSource } from './task-source.ts'
import { createTaskTools, TASK_TOOL_NAMES, type ToolContext } from './task-tools.ts'

const tempDir = useTempDirs('sp-tools-')

const DENIED = ['remote', 'readonly', 'scheduled']

function setup() {
  const root = tempDir()
  const paths = makeStack(root)
  return { paths, tools: createTaskTools({ root, deniedAgents: DENIED }) }
}

const as = (agent: string): ToolContext => ({ agent, sessionID: 'ses_test0001' })

async function forbidden(run: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await run()
  } catch (error) {
    if (SchedulerError.isInstance(error)) return error.code
    throw error
  }
  return undefined
}

describe('createTaskTools', () => {
  it('defines every tool with a description and zod arguments', () => {
    const { tools } = setup()
    expect(Object.keys(tools).sort()).toEqual([...TASK_TOOL_NAMES].sort())
    expect([...TASK_TOOL_NAMES]).toEqual([
      'sallyport_task_list',
      'sallyport_task_show',
      'sallyport_task_create',
      'sallyport_task_pause',
      'sallyport_task_remove',
      'sallyport_task_history',
    ])
    for (const tool of Object.values(tools)) {
      expect(tool.description.length).toBeGreaterThan(10)
      expect(typeof tool.args).toBe('object')
    }
  })

  it.each([...DENIED, ''])('refuses the agent %j on every tool, before touching anything', async (agent) => {
    const { paths, tools } = setup()
    for (const name of TASK_TOOL_NAMES)
      expect(
        await forbidden(() =>
          tools[name].execute({ id: 'daily', prompt: 'x', schedule: '@daily' }, as(agent)),
        ),
      ).toBe('ERR_SCHEDULER_FORBIDDEN')
    expect(readdirSync(paths.tasksDir)).toEqual([])
    expect(enabledIds(paths)).toEqual([])
  })

  it('refuses a missing or malformed context', async () => {
    const { tools } = setup()
    const create = tools.sallyport_task_create
    expect(
      await forbidden(() => create.execute({ id: 'a', prompt: 'x' }, undefined as unknown as ToolContext)),
    ).toBe('ERR_SCHEDULER_FORBIDDEN')
    expect(
      await forbidden(() => create.execute({ id: 'a', prompt: 'x' }, { sessionID: 's' } as ToolContext)),
    ).toBe('ERR_SCHEDULER_FORBIDDEN')
    expect(
      await forbidden(() => create.execute({ id: 'a', prompt: 'x' }, { agent: 7 } as unknown as ToolContext)),
    ).toBe('ERR_SCHEDULER_FORBIDDEN')
  })

  it('has no tool that activates a task: no resume, and create takes no `paused` argument', () => {
    const { tools } = setup()
    expect(Object.keys(tools)).not.toContain('sallyport_task_resume')
    expect(Object.keys(tools).filter((name) => /resume|activate|enable/.test(name))).toEqual([])
    expect(Object.keys(tools.sallyport_task_create.args)).not.toContain('paused')
    expect(tools.sallyport_task_create.description).toContain('PAUSED')
    expect(tools.sallyport_task_create.description).toContain('sallyport task resume <id>')
  })

  it('lets a trusted agent (build) create a task: guidance in front, PAUSED, the user resumes it on the host', async () => {
    const { paths, tools } = setup()
    const answer = await tools.sallyport_task_create.execute(
      {
        id: 'daily',
        prompt: 'Summarise the notes.',
        schedule: '0 7 * * *',
        timeout: '90s',
        output: 'reports/{date}.md',
      },
      as('build'),
    )
    expect(answer).toBe(
      'Created daily, paused: the user activates it with `sallyport task resume daily` on the host.',
    )
    const task = parseTaskSource('daily', readFileSync(join(paths.tasksDir, 'daily.yml'), 'utf8'))
    expect(task.prompt).toBe(`${HOSTILE_CONTENT_GUIDANCE}Summarise the notes.`)
    expect(task).toMatchObject({ schedule: '0 7 * * *', timeoutSeconds: 90, output: 'reports/{date}.md' })
    expect(enabledIds(paths)).toEqual([])
  })

  it('create never activates: not with `paused: false`, and a leftover activation of the id is cleared', async () => {
    const { paths, tools } = setup()
    writeEnabled(paths, ['ghost', 'other'])
    expect(
      await tools.sallyport_task_create.execute(
        { id: 'eager', prompt: 'x', schedule: '@daily', paused: false },
        as('build'),
      ),
    ).toContain('Created eager, paused')
    expect(
      await tools.sallyport_task_create.execute(
        { id: 'ghost', prompt: 'x', schedule: '@hourly' },
        as('build'),
      ),
    ).toContain('Created ghost, paused')
    expect(enabledIds(paths)).toEqual(['other'])
    expect(await tools.sallyport_task_list.execute({}, as('build'))).not.toContain(': active')
  })

  it('create of a manual-only task says so', async () => {
    const { paths, tools } = setup()
    expect(await tools.sallyport_task_create.execute({ id: 'once', prompt: 'x' }, as('build'))).toBe(
      'Created once (manual only: `sallyport task run once` on the host).',
    )
    expect(enabledIds(paths)).toEqual([])
  })

  it('create: paused, and empty optional strings are absent', async () => {
    const { paths, tools } = setup()
    expect(
      await tools.sallyport_task_create.execute(
        { id: 'later', prompt: 'x', schedule: '@daily', timeout: '', model: '', output: '' },
        as('build'),
      ),
    ).toContain('Created later, paused')
    expect(
      parseTaskSource('later', readFileSync(join(paths.tasksDir, 'later.yml'), 'utf8')).timeoutSeconds,
    ).toBe(600)
    expect(enabledIds(paths)).toEqual([])
  })

  it('returns validation errors as text, and leaves no file', async () => {
    const { paths, tools } = setup()
    expect(await tools.sallyport_task_create.execute({ id: '../evil', prompt: 'x' }, as('build'))).toMatch(
      /^Error \(ERR_SCHEDULER_INVALID_ID\): /,
    )
    expect(
      await tools.sallyport_task_create.execute(
        { id: 'a', prompt: 'x', output: 'secrets/x.md' },
        as('build'),
      ),
    ).toMatch(/^Error \(ERR_SCHEDULER_INVALID_TASK\): output: must not be inside knowledge\/secrets\//)
    expect(await tools.sallyport_task_create.execute({ id: 'a' }, as('build'))).toMatch(
      /^Error \(ERR_SCHEDULER_INVALID_TASK\)/,
    )
    expect(readdirSync(paths.tasksDir)).toEqual([])
  })

  it('list, show, pause (of a task the host resumed), remove and history', async () => {
    const { paths, tools } = setup()
    const ctx = as('build')
    expect(await tools.sallyport_task_list.execute({}, ctx)).toBe('No tasks.')
    await tools.sallyport_task_create.execute(
      { id: 'daily', prompt: 'Summarise.', schedule: '0 7 * * *' },
      ctx,
    )
    writeTask(paths, 'broken', 'enabled: true\n')
    expect(await tools.sallyport_task_list.execute({}, ctx)).toContain(
      '- daily: paused, schedule "0 7 * * *", timeout 600s',
    )
    // The user activates it on the host (`sallyport task resume daily`).
    await createTaskHelper({ paths }).resume('daily')

    const list = await tools.sallyport_task_list.execute({}, ctx)
    expect(list).toContain('Time zone UTC')
    expect(list).toContain('- daily: active, schedule "0 7 * * *", timeout 600s')
    expect(list).toContain('- broken.yml: INVALID (')

    const shown = await tools.sallyport_task_show.execute({ id: 'daily' }, ctx)
    expect(shown).toContain('prompt:\nSummarise.')
    expect(shown).not.toContain(HOSTILE_CONTENT_GUIDANCE.slice(0, 30))

    expect(await tools.sallyport_task_pause.execute({ id: 'daily' }, ctx)).toBe('Paused daily.')
    expect(await tools.sallyport_task_pause.execute({ id: 'daily' }, ctx)).toBe('daily was not active.')
    expect(enabledIds(paths)).toEqual([])

    expect(await tools.sallyport_task_history.execute({ id: 'daily' }, ctx)).toBe('No runs yet.')
    await appendHistory(paths, 'daily', {
      at: '2026-01-01T07:00:00.000Z',
      trigger: 'schedule',
      outcome: 'completed',
      durationMs: 12_400,
      output: 'task-results/daily/x.md',
    })
    await appendHistory(paths, 'daily', {
      at: '2026-01-02T07:00:00.000Z',
      trigger: 'manual',
      outcome: 'failed',
      durationMs: 0,
      error: 'Boom',
    })
    expect(await tools.sallyport_task_history.execute({ id: 'daily' }, ctx)).toBe(
      '- 2026-01-02T07:00:00.000Z manual failed 0s (Boom)\n- 2026-01-01T07:00:00.000Z schedule completed 12s → task-results/daily/x.md',
    )

    const removed = await tools.sallyport_task_remove.execute({ id: 'daily' }, ctx)
    expect(removed).toMatch(/^Removed daily; kept as knowledge\/disabled-tasks\/daily-\d{8}T\d{9}Z\.yml\.$/)
    expect(existsSync(join(paths.tasksDir, 'daily.yml'))).toBe(false)
    expect(enabledIds(paths)).toEqual([])
    expect(await tools.sallyport_task_show.execute({ id: 'daily' }, ctx)).toMatch(
      /^Error \(ERR_SCHEDULER_NOT_FOUND\)/,
    )
  })
})
