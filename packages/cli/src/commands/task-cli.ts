import type { Argv } from 'yargs'
import type { Io } from '../io.ts'
import { stackDir } from '../stack-dir.ts'
import { envRun } from './env-run.ts'
import {
  taskCreate,
  taskHistory,
  taskList,
  taskRemove,
  taskRestore,
  taskRun,
  taskSetActive,
  taskShow,
  taskSync,
  taskValidate,
} from './task.ts'

const jsonOption = { type: 'boolean', default: false, describe: 'Print machine-readable JSON' } as const
const idPositional = {
  type: 'string',
  demandOption: true,
  describe: 'Task id (knowledge/tasks/<id>.yml)',
} as const

/** `sallyport task …`: the wiring only; the commands are in `task.ts`. */
export function taskCommands(y: Argv, io: Io): Argv {
  return y
    .command(
      'list',
      'List tasks: state (active, paused, manual), schedule, next run, and invalid task files',
      (c) => c.option('json', jsonOption),
      (a) => taskList({ dir: stackDir(a, io), json: a.json }, io),
    )
    .command(
      'show <id>',
      'Show one task: schedule, state, timeout, model, output and prompt',
      (c) => c.positional('id', idPositional).option('json', jsonOption),
      (a) => taskShow({ dir: stackDir(a, io), id: a.id, json: a.json }, io),
    )
    .command(
      'create <id>',
      'Create a task (the hostile-content guidance is put in front of the prompt); its schedule is active unless --paused',
      (c) =>
        c
          .positional('id', idPositional)
          .option('prompt', {
            type: 'string',
            demandOption: true,
            describe: 'What the unattended agent should do',
          })
          .option('schedule', {
            type: 'string',
            describe:
              'Cron: minute hour day-of-month month day-of-week (or @daily, @hourly…), in assistant.timezone; omit for a manual-only task',
          })
          .option('timeout', {
            type: 'string',
            describe: 'Longest run: 90s, 10m, 1h30m (10s to 6h; default 10m)',
          })
          .option('model', {
            type: 'string',
            describe: 'provider/model (default: the runtime default model)',
          })
          .option('output', {
            type: 'string',
            describe:
              'Result file under knowledge/; {id} {date} {time} {run} are filled in (default task-results/{id}/{run}.md)',
          })
          .option('description', { type: 'string', describe: 'One line for the task list' })
          .option('paused', {
            type: 'boolean',
            default: false,
            describe: 'Create without activating the schedule',
          })
          .option('json', jsonOption)
          .example(
            '$0 task create digest --schedule "0 7 * * 1-5" --prompt "Summarise yesterday\'s commits in ./repo"',
            'Weekdays at 07:00',
          )
          .example(
            '$0 task create audit --prompt "List TODO comments" --output reports/todo-{date}.md',
            'A manual task',
          ),
      (a) =>
        taskCreate(
          {
            dir: stackDir(a, io),
            id: a.id,
            prompt: a.prompt,
            schedule: a.schedule,
            timeout: a.timeout,
            model: a.model,
            output: a.output,
            description: a.description,
            paused: a.paused,
            json: a.json,
          },
          io,
        ),
    )
    .command(
      'pause <id>',
      'Stop the schedule of a task (scheduler.enabled in config/akm/config.json)',
      (c) => c.positional('id', idPositional).option('json', jsonOption),
      (a) => taskSetActive({ dir: stackDir(a, io), id: a.id, active: false, json: a.json }, io),
    )
    .command(
      'resume <id>',
      'Activate the schedule of a task (scheduler.enabled in config/akm/config.json)',
      (c) => c.positional('id', idPositional).option('json', jsonOption),
      (a) => taskSetActive({ dir: stackDir(a, io), id: a.id, active: true, json: a.json }, io),
    )
    .command(
      'run <id>',
      'Run a task now in the running scheduler and wait for it (exit 8 unless it completed)',
      (c) => c.positional('id', idPositional).option('json', jsonOption),
      (a) => taskRun({ dir: stackDir(a, io), id: a.id, json: a.json }, io),
    )
    .command(
      'history <id>',
      'The latest runs of a task: time, trigger, outcome, duration, result file',
      (c) =>
        c
          .positional('id', idPositional)
          .option('limit', { type: 'number', default: 20, describe: 'How many runs (newest first)' })
          .option('json', jsonOption),
      (a) =>
        taskHistory(
          {
            dir: stackDir(a, io),
            id: a.id,
            limit: Math.max(1, Math.min(1000, Math.floor(a.limit))),
            json: a.json,
          },
          io,
        ),
    )
    .command(
      'remove <id>',
      'Remove a task; its definition is kept as knowledge/disabled-tasks/<id>-<time>.yml',
      (c) => c.positional('id', idPositional).option('json', jsonOption),
      (a) => taskRemove({ dir: stackDir(a, io), id: a.id, json: a.json }, io),
    )
    .command(
      'validate [target]',
      'Validate every task source, one task id, or a .yml file (exit 9 when one is invalid)',
      (c) =>
        c
          .positional('target', { type: 'string', describe: 'A task id or a path to a .yml file' })
          .option('json', jsonOption),
      (a) => taskValidate({ dir: stackDir(a, io), target: a.target, json: a.json }, io),
    )
    .command(
      'restore <backup>',
      'Stage task definitions from a backup (.yml file or directory) PAUSED, for review before `task resume`',
      (c) =>
        c
          .positional('backup', {
            type: 'string',
            demandOption: true,
            describe: 'A .yml file or a directory of them',
          })
          .option('json', jsonOption)
          .example(
            '$0 task restore knowledge/disabled-tasks/digest-20261127T070000000Z.yml',
            'Bring back a removed task, paused',
          ),
      (a) => taskRestore({ dir: stackDir(a, io), backup: a.backup, json: a.json }, io),
    )
    .command(
      'sync',
      'Reconcile the running scheduler with the task files now (it also does so every 60 s)',
      (c) =>
        c
          .option('rebind', {
            type: 'boolean',
            default: false,
            describe: 'Recompute every next run from now',
          })
          .option('json', jsonOption),
      (a) => taskSync({ dir: stackDir(a, io), rebind: a.rebind, json: a.json }, io),
    )
    .demandCommand(
      1,
      'Choose a task command: list, show, create, pause, resume, run, history, remove, validate, restore, sync',
    )
}

/** `sallyport env run user -- <command>`. */
export function envCommands(y: Argv, io: Io): Argv {
  return y
    .command(
      'run <scope>',
      'Run one command with knowledge/env/user.env added to its environment (never to a runtime)',
      (c) =>
        c
          .positional('scope', { type: 'string', demandOption: true, choices: ['user'] })
          .example(
            '$0 env run user -- ./scripts/sync-calendar.sh',
            'The script sees the user values; nothing else does',
          ),
      (a) =>
        envRun(
          {
            dir: stackDir(a, io),
            scope: a.scope,
            command: ((a as { '--'?: unknown[] })['--'] ?? []).map(String),
          },
          io,
        ),
    )
    .demandCommand(1, 'Choose an env command: run')
}
