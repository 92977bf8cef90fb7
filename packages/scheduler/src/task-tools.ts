import { z } from 'zod'
import { SchedulerError } from './errors.ts'
import { readHistory } from './history.ts'
import { schedulerPaths } from './paths.ts'
import { socketReconciler } from './reconcile.ts'
import { createTaskHelper, type TaskView } from './task-helper.ts'
import { HOSTILE_CONTENT_GUIDANCE, type TaskDefinition } from './task-source.ts'

/** What the runtime passes a tool's `execute` (opencode 1.18.33: the parts read here). */
export interface ToolContext {
  readonly agent: string
  readonly sessionID: string
  readonly abort?: AbortSignal
}

/** A runtime tool definition: description, zod raw-shape arguments, execute → text for the model. */
export interface ToolDefinition {
  readonly description: string
  readonly args: z.ZodRawShape
  execute(args: Record<string, unknown>, context: ToolContext): Promise<string>
}

export interface TaskToolsOptions {
  /** The stack directory. */
  readonly root: string
  /** Agents that may never use the task tools: the gateway's profiles and `scheduled`. */
  readonly deniedAgents: readonly string[]
}

/** Names of the tools, as the model sees them. */
export const TASK_TOOL_NAMES = [
  'sallyport_task_list',
  'sallyport_task_show',
  'sallyport_task_create',
  'sallyport_task_pause',
  'sallyport_task_remove',
  'sallyport_task_history',
] as const

/**
 * The assistant's task tools: the same task helper as `sallyport task …` (validation, guidance,
 * reconciliation, rollback, backups), for trusted native sessions only. A gateway profile or the
 * `scheduled` profile gets `ERR_SCHEDULER_FORBIDDEN` (the runtime guard refuses these tools for
 * them too, and their wildcard denial hides them): an unattended or remote agent must not create
 * or change what runs unattended later. Activation stays the host's (`sallyport task resume`):
 * tasks the assistant creates are paused, and no tool resumes one.
 */
export function createTaskTools(
  options: TaskToolsOptions,
): Record<(typeof TASK_TOOL_NAMES)[number], ToolDefinition> {
  const paths = schedulerPaths(options.root)
  const helper = createTaskHelper({ paths, reconcile: socketReconciler(paths.socket) })
  const denied = new Set(options.deniedAgents)
  const guard = (context: ToolContext): void => {
    if (typeof context?.agent !== 'string' || context.agent === '' || denied.has(context.agent))
      throw new SchedulerError('ERR_SCHEDULER_FORBIDDEN', 'this agent may not read or change scheduled tasks')
  }
  const tool = (
    description: string,
    args: z.ZodRawShape,
    run: (args: Record<string, unknown>) => Promise<string>,
  ): ToolDefinition => ({
    description,
    args,
    async execute(input, context) {
      guard(context)
      try {
        return await run(input)
      } catch (error) {
        if (SchedulerError.isInstance(error)) return `Error (${error.code}): ${error.message}`
        throw error
      }
    },
  })
  const id = z.string().describe('Task id: 1-128 letters, digits, dots, dashes or underscores')
  return {
    sallyport_task_list: tool(
      'List the scheduled tasks of this assistant, their state and invalid task files.',
      {},
      async () => {
        const listing = await helper.list()
        const lines = listing.tasks.map((view) => describe(view))
        for (const bad of listing.invalid) lines.push(`- ${bad.file}: INVALID (${bad.problem})`)
        return lines.length > 0 ? `Time zone ${listing.timezone}\n${lines.join('\n')}` : 'No tasks.'
      },
    ),
    sallyport_task_show: tool(
      'Show one task: schedule, state, timeout, model, output and prompt.',
      { id },
      async (args) => {
        const view = await helper.show(String(args.id))
        return `${describe(view)}\nprompt:\n${stripGuidance(view.task.prompt)}`
      },
    ),
    sallyport_task_create: tool(
      'Create a task that runs a prompt unattended on a cron schedule (five fields, in the stack time zone), or manually when no schedule is given. It is created PAUSED: the user activates it on the host with `sallyport task resume <id>`. The result is written under the knowledge directory. Unattended runs can only read non-secret workspace files.',
      {
        id,
        prompt: z.string().describe('What the unattended agent should do'),
        schedule: z
          .string()
          .optional()
          .describe('Cron: minute hour day-of-month month day-of-week, e.g. "0 7 * * 1-5"'),
        timeout: z.string().optional().describe('Longest run, e.g. "90s", "10m", "1h" (default 10m)'),
        model: z.string().optional().describe('provider/model (default: the configured model)'),
        output: z
          .string()
          .optional()
          .describe(
            'Result file relative to the knowledge directory; {id} {date} {time} {run} are filled in',
          ),
      },
      async (args) => {
        const created = await helper.create({
          id: String(args.id),
          prompt: String(args.prompt ?? ''),
          schedule: optionalString(args.schedule),
          timeout: optionalString(args.timeout),
          model: optionalString(args.model),
          output: optionalString(args.output),
          // Activation is the host's: a prompt-injected session must not start unattended runs.
          paused: true,
        })
        return created.state === 'paused'
          ? `Created ${created.task.id}, paused: the user activates it with \`sallyport task resume ${created.task.id}\` on the host.`
          : `Created ${created.task.id} (manual only: \`sallyport task run ${created.task.id}\` on the host).`
      },
    ),
    sallyport_task_pause: tool(
      'Pause a task: its schedule stops firing until the user resumes it on the host.',
      { id },
      async (args) => {
        const result = await helper.pause(String(args.id))
        return result.changed ? `Paused ${String(args.id)}.` : `${String(args.id)} was not active.`
      },
    ),
    sallyport_task_remove: tool(
      'Remove a task; its definition is kept under knowledge/disabled-tasks/.',
      { id },
      async (args) => {
        const result = await helper.remove(String(args.id))
        return `Removed ${String(args.id)}; kept as knowledge/disabled-tasks/${result.backup}.`
      },
    ),
    sallyport_task_history: tool(
      'The latest runs of a task: time, outcome, duration, output.',
      { id },
      async (args) => {
        const runs = await readHistory(paths, String(args.id), 20)
        if (runs.length === 0) return 'No runs yet.'
        return runs
          .map(
            (run) =>
              `- ${run.at} ${run.trigger} ${run.outcome} ${Math.round(run.durationMs / 1000)}s${run.output ? ` → ${run.output}` : ''}${run.error ? ` (${run.error})` : ''}`,
          )
          .join('\n')
      },
    ),
  }
}

function describe(view: TaskView): string {
  const task: TaskDefinition = view.task
  return `- ${task.id}: ${view.state}${task.schedule ? `, schedule "${task.schedule}"` : ''}, timeout ${task.timeoutSeconds}s${task.model ? `, model ${task.model}` : ''}${task.output ? `, output ${task.output}` : ''}`
}

const stripGuidance = (prompt: string): string =>
  prompt.startsWith(HOSTILE_CONTENT_GUIDANCE) ? prompt.slice(HOSTILE_CONTENT_GUIDANCE.length) : prompt

const optionalString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined
