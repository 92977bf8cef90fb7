import type {
  InvalidTask,
  RunRecord,
  SchedulerStatus,
  SyncReport,
  TaskDefinition,
  TaskView,
} from '@sallyport/scheduler'
import { askScheduler, SchedulerError, schedulerPaths } from '@sallyport/scheduler/stack'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { requireStack } from '../stack/require-stack.ts'

// `sallyport task …`: the host side of the task helper (@sallyport/scheduler), the one mutation
// boundary it shares with the assistant's task tools. Every change validates, takes the task
// lock, reconciles the running scheduler and rolls back when that fails.

export interface TaskCommandOptions {
  readonly dir: string
  readonly json?: boolean
}

/**
 * The stack's task helper. The scheduler's root (the task sources' yaml, the schedule engine) is
 * loaded here, when a task command runs: not with the CLI, whose other commands (`up`, `serve`)
 * take the light `@sallyport/scheduler/stack`.
 */
async function helperFor(dir: string) {
  const layout = await requireStack(dir)
  const scheduler = await import('@sallyport/scheduler')
  const paths = schedulerPaths(layout.root)
  return {
    paths,
    helper: scheduler.createTaskHelper({ paths, reconcile: scheduler.socketReconciler(paths.socket) }),
    scheduler,
  }
}

const print = (io: Io, json: boolean | undefined, value: unknown, text: string): void =>
  io.out(json ? `${JSON.stringify(value)}\n` : text)

const reconciledNote = (state: 'applied' | 'deferred'): string =>
  state === 'applied'
    ? 'the running scheduler has the change'
    : 'the scheduler is not running: the change applies when the stack starts'

/** The prompt without the hostile-content guidance (the scheduler's `HOSTILE_CONTENT_GUIDANCE`). */
const promptOf = (task: TaskDefinition, guidance: string): string =>
  task.prompt.startsWith(guidance) ? task.prompt.slice(guidance.length) : task.prompt

function taskJson(view: TaskView): Record<string, unknown> {
  const { task } = view
  return {
    id: task.id,
    state: view.state,
    ...(task.schedule !== undefined && { schedule: task.schedule }),
    timeoutSeconds: task.timeoutSeconds,
    ...(task.model !== undefined && { model: task.model }),
    ...(task.output !== undefined && { output: task.output }),
    ...(task.description !== undefined && { description: task.description }),
  }
}

function taskLine(view: TaskView, next?: string): string {
  const { task } = view
  const schedule = task.schedule ? `"${task.schedule}"` : 'manual only'
  return `${task.id}  ${view.state}  ${schedule}${next ? `  next ${next}` : ''}  timeout ${task.timeoutSeconds}s${task.model ? `  model ${task.model}` : ''}\n`
}

const invalidLine = (bad: InvalidTask): string => `${bad.file}  INVALID  ${bad.problem}\n`

/** The running scheduler's status, or undefined when none answers. */
async function schedulerStatus(socket: string): Promise<SchedulerStatus | undefined> {
  try {
    return await askScheduler(socket, { op: 'status' }, 3000)
  } catch {
    return undefined
  }
}

/** `task list`: every task, its state and next slot (when the scheduler runs), and every invalid file. */
export async function taskList(options: TaskCommandOptions, io: Io): Promise<void> {
  const { paths, helper, scheduler } = await helperFor(options.dir)
  const [listing, status] = await Promise.all([helper.list(), schedulerStatus(paths.socket)])
  const sync = status?.lastSync?.ok ? status.lastSync : undefined
  // The running scheduler's bindings; without one, the next slot the schedule gives from now.
  const nextOf = (id: string): string | undefined => {
    if (sync) return sync.bound.find((b) => b.id === id)?.next
    const view = listing.tasks.find((v) => v.task.id === id)
    if (view?.state !== 'active' || !view.task.schedule) return undefined
    return scheduler
      .compileSchedule(view.task.schedule, listing.timezone)
      .nextAfter(new Date())
      ?.toISOString()
  }
  if (options.json) {
    io.out(
      `${JSON.stringify({
        timezone: listing.timezone,
        scheduler: status ? (status.healthy ? 'running' : 'unhealthy') : 'not running',
        tasks: listing.tasks.map((view) => ({
          ...taskJson(view),
          ...(nextOf(view.task.id) && { next: nextOf(view.task.id) }),
        })),
        invalid: listing.invalid,
      })}\n`,
    )
    return
  }
  let text = `time zone ${listing.timezone}; scheduler ${status ? (status.healthy ? 'running' : 'UNHEALTHY (last sync failed)') : 'not running'}\n`
  if (listing.tasks.length === 0 && listing.invalid.length === 0)
    text += 'no tasks (create one with `sallyport task create`)\n'
  for (const view of listing.tasks) text += taskLine(view, nextOf(view.task.id))
  for (const bad of listing.invalid) text += invalidLine(bad)
  io.out(text)
}

/** `task show <id>`. */
export async function taskShow(options: TaskCommandOptions & { id: string }, io: Io): Promise<void> {
  const { helper, scheduler } = await helperFor(options.dir)
  const view = await helper.show(options.id)
  const prompt = promptOf(view.task, scheduler.HOSTILE_CONTENT_GUIDANCE)
  print(
    io,
    options.json,
    { ...taskJson(view), timezone: view.timezone, prompt },
    `${taskLine(view)}time zone ${view.timezone}\n${view.task.output ? `output knowledge/${view.task.output}\n` : 'output knowledge/task-results/<id>/<run>.md\n'}prompt (after the hostile-content guidance):\n${prompt}\n`,
  )
}

/** `task create <id> …`. */
export async function taskCreate(
  options: TaskCommandOptions & {
    id: string
    prompt: string
    schedule?: string | undefined
    timeout?: string | undefined
    model?: string | undefined
    output?: string | undefined
    description?: string | undefined
    paused?: boolean | undefined
  },
  io: Io,
): Promise<void> {
  const { helper } = await helperFor(options.dir)
  const created = await helper.create(options)
  print(
    io,
    options.json,
    { ...taskJson(created), reconciled: created.reconciled },
    `created ${created.task.id} (${created.state}); ${reconciledNote(created.reconciled)}\n`,
  )
}

/** `task pause <id>` / `task resume <id>`. */
export async function taskSetActive(
  options: TaskCommandOptions & { id: string; active: boolean },
  io: Io,
): Promise<void> {
  const { helper } = await helperFor(options.dir)
  const result = options.active ? await helper.resume(options.id) : await helper.pause(options.id)
  const verb = options.active ? 'resumed' : 'paused'
  print(
    io,
    options.json,
    {
      id: options.id,
      state: options.active ? 'active' : 'paused',
      changed: result.changed,
      reconciled: result.reconciled,
    },
    result.changed
      ? `${verb} ${options.id}; ${reconciledNote(result.reconciled)}\n`
      : `${options.id} was ${verb} already\n`,
  )
}

/** `task remove <id>`. */
export async function taskRemove(options: TaskCommandOptions & { id: string }, io: Io): Promise<void> {
  const { helper } = await helperFor(options.dir)
  const result = await helper.remove(options.id)
  print(
    io,
    options.json,
    { id: options.id, backup: `knowledge/disabled-tasks/${result.backup}`, reconciled: result.reconciled },
    `removed ${options.id}; kept as knowledge/disabled-tasks/${result.backup}; ${reconciledNote(result.reconciled)}\n`,
  )
}

/** `task validate [target]`: exit 9 when anything is invalid. */
export async function taskValidate(
  options: TaskCommandOptions & { target?: string | undefined },
  io: Io,
): Promise<void> {
  const { helper } = await helperFor(options.dir)
  const result = await helper.validate(options.target)
  print(
    io,
    options.json,
    { valid: result.valid.map((task) => task.id), invalid: result.invalid },
    `${result.valid.map((task) => `${task.id}  valid\n`).join('')}${result.invalid.map(invalidLine).join('')}${
      result.valid.length + result.invalid.length === 0 ? 'no tasks\n' : ''
    }`,
  )
  if (result.invalid.length > 0)
    throw new CliError(
      'ERR_CLI_CHECK_FAILED',
      `${result.invalid.length} invalid task source${result.invalid.length > 1 ? 's' : ''}`,
    )
}

/** `task restore <backup>`: stages definitions paused, with what to review. */
export async function taskRestore(options: TaskCommandOptions & { backup: string }, io: Io): Promise<void> {
  const { helper, scheduler } = await helperFor(options.dir)
  const result = await helper.restore(options.backup)
  if (options.json) {
    io.out(
      `${JSON.stringify({ staged: result.staged.map((task) => taskJson({ task, state: task.schedule ? 'paused' : 'manual' })), refused: result.refused, reconciled: result.reconciled })}\n`,
    )
  } else {
    let text = ''
    for (const task of result.staged) {
      text += `staged ${task.id} PAUSED: review before \`sallyport task resume ${task.id}\`\n`
      text += `  schedule     ${task.schedule ?? 'none (manual only)'}\n`
      text += '  policy       the scheduled profile: unattended, nothing may ask\n'
      text += '  tools        reading non-secret workspace files only (no shell, no edits, no web)\n'
      text += '  secrets      none are given to a task; user.env is never loaded\n'
      text += `  result       knowledge/${task.output ?? 'task-results/<id>/<run>.md'}\n`
      text += `  timeout      ${task.timeoutSeconds}s${task.model ? `, model ${task.model}` : ''}\n`
      text += `  prompt       ${promptOf(task, scheduler.HOSTILE_CONTENT_GUIDANCE).split('\n', 1)[0]?.slice(0, 100) ?? ''}\n`
    }
    for (const bad of result.refused) text += `refused ${bad.file}: ${bad.problem}\n`
    if (result.staged.length + result.refused.length === 0) text += 'no task definitions found\n'
    io.out(text)
  }
  if (result.staged.length === 0 && result.refused.length > 0)
    throw new CliError('ERR_CLI_CHECK_FAILED', 'nothing was restored')
}

/** `task history <id>`. */
export async function taskHistory(
  options: TaskCommandOptions & { id: string; limit: number },
  io: Io,
): Promise<void> {
  const { paths, scheduler } = await helperFor(options.dir)
  const runs = await scheduler.readHistory(paths, options.id, options.limit)
  print(
    io,
    options.json,
    { id: options.id, runs },
    runs.length === 0 ? `no runs of ${options.id} yet\n` : runs.map(runLine).join(''),
  )
}

const runLine = (run: RunRecord): string =>
  `${run.at}  ${run.trigger.padEnd(8)}  ${run.outcome.padEnd(9)}  ${(run.durationMs / 1000).toFixed(1)}s${run.output ? `  knowledge/${run.output}` : ''}${run.error ? `  ${run.error}` : ''}\n`

/** `task run <id>`: runs it now in the running scheduler and waits; exit 8 unless it completed. */
export async function taskRun(options: TaskCommandOptions & { id: string }, io: Io): Promise<void> {
  const { paths, helper } = await helperFor(options.dir)
  const view = await helper.show(options.id)
  io.err(`running ${options.id} (up to ${view.task.timeoutSeconds}s)…\n`)
  const record = await askScheduler(
    paths.socket,
    { op: 'run', id: options.id },
    (view.task.timeoutSeconds + 90) * 1000,
  )
  print(io, options.json, { id: options.id, ...record }, runLine(record))
  if (record.outcome !== 'completed')
    throw new CliError(
      'ERR_CLI_START_FAILED',
      `task ${options.id} ${record.outcome}${record.error ? `: ${record.error}` : ''}`,
    )
}

/** `task sync [--rebind]`: the reconciliation command; without a running scheduler, validates only. */
export async function taskSync(options: TaskCommandOptions & { rebind: boolean }, io: Io): Promise<void> {
  const { paths, helper } = await helperFor(options.dir)
  let report: SyncReport
  try {
    report = await askScheduler(paths.socket, { op: 'sync', rebind: options.rebind }, 30_000)
  } catch (error) {
    if (!SchedulerError.isInstance(error) || error.code !== 'ERR_SCHEDULER_UNAVAILABLE') throw error
    const result = await helper.validate()
    print(
      io,
      options.json,
      { scheduler: 'not running', valid: result.valid.map((t) => t.id), invalid: result.invalid },
      `the scheduler is not running; validated only: ${result.valid.length} valid, ${result.invalid.length} invalid\n${result.invalid.map(invalidLine).join('')}`,
    )
    return
  }
  if (!report.ok) {
    print(io, options.json, report, '')
    throw new CliError('ERR_CLI_CHECK_FAILED', `the sync failed: ${report.error}`)
  }
  print(
    io,
    options.json,
    report,
    `synced at ${report.at} (${report.timezone}): ${report.bound.length} scheduled, ${report.paused.length} paused, ${report.manual.length} manual, ${report.invalid.length} invalid\n${report.bound
      .map((b) => `${b.id}  next ${b.next}\n`)
      .join('')}${report.invalid.map(invalidLine).join('')}`,
  )
}
