import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { step, waitFor } from '@sallyport/testkit'
import { describe, expect, it } from 'vitest'
import { alive, type LiveCli, runCli } from './cli-process.ts'
import {
  type LogLine,
  logLines,
  mcpClient,
  modelForFile,
  nativeFetch,
  newScriptedStack,
  type Stops,
  upScriptedStack,
} from './stack-fixture.ts'

// End to end through the BUILT CLI and the real runtime of `sallyport up`: the scheduler process
// runs tasks through the native server with the `scheduled` profile; `task …` is the mutation
// boundary; an invalid task is reported and never stops a valid one; a failed sync makes the
// assistant runtime unhealthy until a sync succeeds; the assistant's task tools work for a trusted
// native session and for no gateway or scheduled agent; the scheduler exiting stops the stack.

const stops: Stops = []
const model = modelForFile(stops)

/** A fresh stack on free ports whose assistant and moderator use the scripted model. */
const scriptedStack = (): Promise<string> => newScriptedStack(model, stops)
/** `sallyport up` of the stack, once it logged `ready`. */
const upStack = (dir: string): Promise<{ cli: LiveCli; ready: LogLine }> => upScriptedStack(dir, stops)

interface History {
  runs: { at: string; trigger: string; outcome: string; output?: string; error?: string }[]
}

async function history(dir: string, id: string): Promise<History['runs']> {
  const result = await runCli(['task', 'history', id, '--dir', dir, '--json'])
  expect(result.code, result.stderr).toBe(0)
  return (JSON.parse(result.stdout) as History).runs
}

/** A native (trusted) session's turn, through the native API with the stack's password. */
async function nativeTurn(dir: string, text: string): Promise<void> {
  const created = await nativeFetch(dir, '/session', { method: 'POST', body: { title: 'native' } })
  const session = (await created.json()) as { id: string }
  // The blocking prompt: returns when the turn is over.
  const response = await nativeFetch(dir, `/session/${session.id}/message`, {
    method: 'POST',
    body: { parts: [{ type: 'text', text }] },
  })
  expect(response.status).toBe(200)
}

/** `GET <native>/<path>` with the stack's password. */
async function nativeGet(dir: string, path: string): Promise<unknown> {
  const response = await nativeFetch(dir, path)
  expect(response.status).toBe(200)
  return response.json()
}

/** The text of the tool result the model was sent back after its first step. */
function toolResultText(marker: string): string {
  const second = model.requestsFor(marker)[1]
  return JSON.stringify(second?.body?.messages ?? [])
}

describe('sallyport task (built CLI, real runtime, scheduler process)', () => {
  it('runs scheduled and manual tasks, reports invalid ones, stages restores paused, and survives a failed sync', async () => {
    const dir = await scriptedStack()
    // sallyport.json is read-only in the container: no task operation may write it.
    const stackJson = readFileSync(join(dir, 'sallyport.json'), 'utf8')
    // A fresh installation seeds no tasks.
    expect(readdirSync(join(dir, 'knowledge/tasks'))).toEqual([])

    const every = model.script([step.text('minute report')], 'every-minute')
    const manual = model.script([step.text('manual report')], 'manual')
    const created = await runCli([
      'task',
      'create',
      'minutely',
      '--dir',
      dir,
      '--schedule',
      '* * * * *',
      '--prompt',
      `Write the report ${every}`,
      '--output',
      'reports/{id}-{run}.md',
      '--timeout',
      '2m',
    ])
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toContain('the scheduler is not running')
    expect(
      (await runCli(['task', 'create', 'by-hand', '--dir', dir, '--prompt', `Report ${manual}`])).code,
    ).toBe(0)
    // Hand-written sources: one with the forbidden `enabled` field, one that is not YAML.
    writeFileSync(
      join(dir, 'knowledge/tasks/self-enabled.yml'),
      `version: 1\nschedule: "* * * * *"\nprompt: x\nenabled: true\n`,
    )
    writeFileSync(join(dir, 'knowledge/tasks/broken.yml'), 'version: 1\nprompt: [unterminated\n')
    const engineFile = join(dir, 'config/akm/config.json')
    const engineConfig = JSON.parse(readFileSync(engineFile, 'utf8'))
    engineConfig.scheduler.enabled.push('self-enabled')
    writeFileSync(engineFile, JSON.stringify(engineConfig))

    const { cli, ready } = await upStack(dir)
    const lines = logLines(cli.stdout())
    const scheduler = lines.find((line) => line.event === 'child_started' && line.child === 'scheduler')
    expect(scheduler?.pid).toBeGreaterThan(0)
    // The first sync reports both invalid sources, one line each (the log lines reach `up`'s
    // output through a pipe, so they may follow the `ready` line).
    await waitFor(
      () => {
        const schedulerLines = logLines(cli.stdout())
          .filter((line) => line.child === 'scheduler')
          .map((line) => String(line.line))
        return ['self-enabled.yml', 'broken.yml'].every((file) =>
          schedulerLines.some((line) => line.includes('task_invalid') && line.includes(file)),
        )
      },
      { timeoutMs: 10_000 },
    )
    // Invalid tasks are reported; they do not make the runtime unhealthy.
    const healthUrl = String(ready.mcpUrl).replace(/\/mcp$/, '/health')
    expect(await (await fetch(healthUrl)).json()).toMatchObject({ ok: true, runtime: 'ok', scheduler: 'ok' })

    const list = JSON.parse((await runCli(['task', 'list', '--dir', dir, '--json'])).stdout)
    expect(list.scheduler).toBe('running')
    expect(list.tasks.map((t: { id: string; state: string }) => `${t.id}:${t.state}`).sort()).toEqual([
      'by-hand:manual',
      'minutely:active',
    ])
    expect(list.invalid.map((t: { file: string }) => t.file).sort()).toEqual([
      'broken.yml',
      'self-enabled.yml',
    ])

    // A manual run, through the running scheduler.
    const ran = await runCli(['task', 'run', 'by-hand', '--dir', dir, '--json'])
    expect(ran.code, ran.stderr).toBe(0)
    const record = JSON.parse(ran.stdout)
    expect(record).toMatchObject({ trigger: 'manual', outcome: 'completed' })
    expect(readFileSync(join(dir, 'knowledge', record.output), 'utf8')).toBe('manual report\n')
    // The run used the scheduled profile, with the guidance in front of the prompt.
    const asked = JSON.stringify(model.requestsFor(manual)[0]?.body?.messages ?? [])
    expect(asked).toContain('This task runs unattended')

    // The every-minute schedule fires within a minute (plus the run).
    const scheduled = await waitFor(
      async () => (await history(dir, 'minutely')).find((run) => run.trigger === 'schedule'),
      { timeoutMs: 100_000, intervalMs: 1000 },
    )
    expect(scheduled.outcome).toBe('completed')
    expect(readFileSync(join(dir, 'knowledge', String(scheduled.output)), 'utf8')).toBe('minute report\n')

    // Pause: the scheduler unbinds it at once.
    const paused = await runCli(['task', 'pause', 'minutely', '--dir', dir])
    expect(paused.code, paused.stderr).toBe(0)
    expect(paused.stdout).toContain('the running scheduler has the change')
    const afterPause = JSON.parse((await runCli(['task', 'sync', '--dir', dir, '--json'])).stdout)
    expect(afterPause.bound).toEqual([])
    expect(afterPause.paused).toContain('minutely')

    // Remove keeps a backup; restore stages it PAUSED, never active.
    const removed = JSON.parse((await runCli(['task', 'remove', 'minutely', '--dir', dir, '--json'])).stdout)
    expect(removed.backup).toMatch(/^knowledge\/disabled-tasks\/minutely-\d{8}T\d{9}Z\.yml$/)
    expect(existsSync(join(dir, 'knowledge/tasks/minutely.yml'))).toBe(false)
    const gone = await runCli(['task', 'resume', 'minutely', '--dir', dir])
    expect(gone.code).toBe(4)
    expect(gone.stderr).toContain('no task minutely')
    const restored = await runCli(['task', 'restore', join(dir, removed.backup), '--dir', dir])
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toContain('staged minutely PAUSED')
    const config = JSON.parse(readFileSync(join(dir, 'config/akm/config.json'), 'utf8'))
    expect(config.scheduler.enabled).not.toContain('minutely')
    const relisted = JSON.parse((await runCli(['task', 'list', '--dir', dir, '--json'])).stdout)
    expect(relisted.tasks.find((t: { id: string }) => t.id === 'minutely')?.state).toBe('paused')

    // A failed sync (a broken engine configuration) marks the runtime unhealthy until a sync succeeds.
    const engine = join(dir, 'config/akm/config.json')
    const good = readFileSync(engine, 'utf8')
    writeFileSync(engine, '{ not json')
    const failed = await runCli(['task', 'sync', '--dir', dir])
    expect(failed.code).toBe(9)
    expect(failed.stderr).toContain('config/akm/config.json is not valid JSON')
    await waitFor(
      async () => {
        const response = await fetch(healthUrl)
        const body = (await response.json()) as Record<string, unknown>
        return response.status === 503 && body.runtime === 'unhealthy' && body.scheduler === 'sync_failed'
      },
      { timeoutMs: 10_000 },
    )
    const doctor = await runCli(['doctor', '--dir', dir])
    expect(doctor.stdout).toMatch(/scheduler.*sync failed/)
    // The native API stays up for repair, and the gateway's own check says why it is unhealthy.
    expect(await nativeGet(dir, '/global/health')).toMatchObject({ healthy: true })
    expect((await runCli(['health', '--dir', dir])).code).toBe(9)
    writeFileSync(engine, good)
    expect((await runCli(['task', 'sync', '--dir', dir])).code).toBe(0)
    await waitFor(async () => ((await (await fetch(healthUrl)).json()) as { ok: boolean }).ok === true, {
      timeoutMs: 10_000,
    })

    expect(readFileSync(join(dir, 'sallyport.json'), 'utf8')).toBe(stackJson)

    // The scheduler exiting stops the stack (exit 12: the scheduler exited).
    process.kill(Number(scheduler?.pid), 'SIGKILL')
    const exit = await cli.exited
    expect(exit.code).toBe(12)
    expect(cli.stderr()).toMatch(/^sallyport: scheduler was killed by SIGKILL: stopped the stack\n$/)
    expect(
      logLines(cli.stdout()).some((line) => line.event === 'child_exited' && line.child === 'scheduler'),
    ).toBe(true)
    for (const line of logLines(cli.stdout()).filter((l) => l.event === 'child_started'))
      await waitFor(() => !alive(Number(line.pid)), { timeoutMs: 10_000 })
  }, 300_000)

  it('gives the task tools to trusted native sessions only: never to a gateway credential nor to a scheduled run', async () => {
    const dir = await scriptedStack()
    const { cli, ready } = await upStack(dir)
    const taskFile = (id: string): string => join(dir, 'knowledge/tasks', `${id}.yml`)

    // A trusted native session creates a task through the same helper as the CLI.
    const create = model.script(
      [
        step.calls({
          name: 'sallyport_task_create',
          input: { id: 'from-assistant', prompt: 'Summarise the notes', schedule: '0 7 * * *' },
        }),
        step.text('created it'),
      ],
      'native-create',
    )
    await nativeTurn(dir, `Schedule my summary ${create}`)
    // Created paused: activation stays the host's (a prompt-injected session must not start runs).
    expect(toolResultText(create)).toContain(
      'Created from-assistant, paused: the user activates it with `sallyport task resume from-assistant` on the host.',
    )
    const source = readFileSync(taskFile('from-assistant'), 'utf8')
    expect(source).toContain('This task runs unattended')
    expect(source).toContain('Summarise the notes')
    expect(JSON.parse(readFileSync(join(dir, 'config/akm/config.json'), 'utf8')).scheduler.enabled).toEqual(
      [],
    )
    // Invalid input is refused by the helper, exactly as on the CLI.
    const invalid = model.script(
      [
        step.calls({ name: 'sallyport_task_create', input: { id: '../escape', prompt: 'x' } }),
        step.text('no'),
      ],
      'native-invalid',
    )
    await nativeTurn(dir, `Try ${invalid}`)
    expect(toolResultText(invalid)).toContain('ERR_SCHEDULER_INVALID_ID')

    // The host activates it.
    const resumed = await runCli(['task', 'resume', 'from-assistant', '--dir', dir])
    expect(resumed.code, resumed.stderr).toBe(0)

    // A full credential's agent through the gateway: refused, the task stays.
    const added = await runCli(['credential', 'add', 'remote-full', 'full', '--dir', dir])
    expect(added.code, added.stderr).toBe(0)
    const remove = model.script(
      [step.calls({ name: 'sallyport_task_remove', input: { id: 'from-assistant' } }), step.text('tried')],
      'gateway-remove',
    )
    const client = await mcpClient(String(ready.mcpUrl), added.stdout.trim())
    const run = (await client.callTool({
      name: 'gateway.agent.run',
      arguments: { message: `Remove the summary task ${remove}`, waitMs: 30_000 },
    })) as { structuredContent?: { status?: string } }
    await client.close()
    expect(run.structuredContent?.status).toBe('completed')
    expect(toolResultText(remove)).not.toContain('Removed from-assistant')
    expect(toolResultText(remove)).toContain('sallyport_task_remove: refused by the workspace guard')
    expect(existsSync(taskFile('from-assistant'))).toBe(true)

    // A scheduled run may not create or change tasks either.
    const plant = model.script(
      [
        step.calls({
          name: 'sallyport_task_create',
          input: { id: 'planted', prompt: 'x', schedule: '* * * * *' },
        }),
        step.text('planted?'),
      ],
      'scheduled-plant',
    )
    expect((await runCli(['task', 'create', 'sneaky', '--dir', dir, '--prompt', `Go ${plant}`])).code).toBe(0)
    const ran = await runCli(['task', 'run', 'sneaky', '--dir', dir, '--json'])
    expect(ran.code, ran.stderr).toBe(0)
    expect(toolResultText(plant)).not.toContain('Created planted')
    // The scheduled profile's wildcard denial: the tool is not even offered.
    expect(toolResultText(plant)).toContain('Model tried to call unavailable tool')
    expect(existsSync(taskFile('planted'))).toBe(false)
    expect(JSON.parse(readFileSync(join(dir, 'config/akm/config.json'), 'utf8')).scheduler.enabled).toEqual([
      'from-assistant',
    ])

    cli.child.kill('SIGTERM')
    expect((await cli.exited).code).toBe(0)
  }, 240_000)
})
