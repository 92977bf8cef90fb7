import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { enabledIds, makeStack, useTempDirs, writeTask } from '../test/helpers.ts'
import { SchedulerError } from './errors.ts'
import { appendHistory } from './history.ts'
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

  it('lets a trusted agent (build) create a task: guidance in front, activated, deferred without a scheduler', async () => {
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
    expect(answer).toBe('Created daily (active; bound when the scheduler starts).')
    const task = parseTaskSource('daily', readFileSync(join(paths.tasksDir, 'daily.yml'), 'utf8'))
    expect(task.prompt).toBe(`${HOSTILE_CONTENT_GUIDANCE}Summarise the notes.`)
    expect(task).toMatchObject({ schedule: '0 7 * * *', timeoutSeconds: 90, output: 'reports/{date}.md' })
    expect(enabledIds(paths)).toEqual(['daily'])
  })

  it('create: paused, and empty optional strings are absent', async () => {
    const { paths, tools } = setup()
    expect(
      await tools.sallyport_task_create.execute(
        { id: 'later', prompt: 'x', schedule: '@daily', timeout: '', model: '', output: '', paused: true },
        as('build'),
      ),
    ).toContain('(paused;')
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

  it('list, show, pause, resume, remove and history', async () => {
    const { paths, tools } = setup()
    const ctx = as('build')
    expect(await tools.sallyport_task_list.execute({}, ctx)).toBe('No tasks.')
    await tools.sallyport_task_create.execute(
      { id: 'daily', prompt: 'Summarise.', schedule: '0 7 * * *' },
      ctx,
    )
    writeTask(paths, 'broken', 'enabled: true\n')

    const list = await tools.sallyport_task_list.execute({}, ctx)
    expect(list).toContain('Time zone UTC')
    expect(list).toContain('- daily: active, schedule "0 7 * * *", timeout 600s')
    expect(list).toContain('- broken.yml: INVALID (')

    const shown = await tools.sallyport_task_show.execute({ id: 'daily' }, ctx)
    expect(shown).toContain('prompt:\nSummarise.')
    expect(shown).not.toContain(HOSTILE_CONTENT_GUIDANCE.slice(0, 30))

    expect(await tools.sallyport_task_pause.execute({ id: 'daily' }, ctx)).toBe('Paused daily.')
    expect(await tools.sallyport_task_pause.execute({ id: 'daily' }, ctx)).toBe('daily was not active.')
    expect(await tools.sallyport_task_resume.execute({ id: 'daily' }, ctx)).toBe('Resumed daily.')
    expect(await tools.sallyport_task_resume.execute({ id: 'daily' }, ctx)).toBe('daily was active already.')

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
