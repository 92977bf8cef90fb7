import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { serveControl } from '@sallyport/scheduler'
import { describe, expect, it } from 'vitest'
import type { Io } from '../src/io.ts'
import { main } from '../src/main.ts'
import { runCli } from './cli-process.ts'
import { useTempStack } from './temp-stack.ts'

// `sallyport task …` and `env run` without a running stack (the scheduler is a fake on the
// control socket where a test needs one): arguments, exit codes, what is written and where.

const stack = useTempStack({ init: 'in-process' })

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const io: Io = {
    out: (text) => {
      out += text
    },
    err: (text) => {
      err += text
    },
    env: {},
  }
  const code = await main([...args, '--dir', stack.dir], io)
  process.exitCode = undefined
  return { code, out, err }
}

const enabled = async (): Promise<string[]> =>
  JSON.parse(readFileSync(join(stack.dir, 'config/akm/config.json'), 'utf8')).scheduler.enabled

describe('sallyport task (no running scheduler)', () => {
  it('creates, lists, shows, pauses, resumes and removes a task; the change waits for the scheduler', async () => {
    const created = await cli([
      'task',
      'create',
      'digest',
      '--schedule',
      '0 7 * * 1-5',
      '--prompt',
      'Summarise',
      '--json',
    ])
    expect(created.code, created.err).toBe(0)
    expect(JSON.parse(created.out)).toMatchObject({ id: 'digest', state: 'active', reconciled: 'deferred' })
    expect(await enabled()).toEqual(['digest'])
    const source = readFileSync(join(stack.dir, 'knowledge/tasks/digest.yml'), 'utf8')
    expect(source).toMatch(/^version: 1\n/)
    expect(source).toContain('This task runs unattended')
    expect(source).not.toContain('enabled')

    const again = await cli(['task', 'create', 'digest', '--prompt', 'x'])
    expect(again.code).toBe(5)
    expect(again.err).toContain('task digest exists already')

    const list = JSON.parse((await cli(['task', 'list', '--json'])).out)
    expect(list).toMatchObject({
      scheduler: 'not running',
      tasks: [{ id: 'digest', state: 'active', schedule: '0 7 * * 1-5' }],
    })
    const show = await cli(['task', 'show', 'digest'])
    expect(show.out).toContain('prompt (after the hostile-content guidance):\nSummarise\n')

    expect((await cli(['task', 'pause', 'digest'])).code).toBe(0)
    expect(await enabled()).toEqual([])
    expect((await cli(['task', 'pause', 'digest'])).out).toContain('digest was paused already')
    expect((await cli(['task', 'resume', 'digest'])).code).toBe(0)
    expect(await enabled()).toEqual(['digest'])

    const removed = JSON.parse((await cli(['task', 'remove', 'digest', '--json'])).out)
    expect(removed.backup).toMatch(/^knowledge\/disabled-tasks\/digest-\d{8}T\d{9}Z\.yml$/)
    expect(existsSync(join(stack.dir, removed.backup))).toBe(true)
    expect(await enabled()).toEqual([])
    expect((await cli(['task', 'show', 'digest'])).code).toBe(4)

    const restored = await cli(['task', 'restore', join(stack.dir, removed.backup)])
    expect(restored.code, restored.err).toBe(0)
    expect(restored.out).toContain('staged digest PAUSED')
    expect(restored.out).toContain('tools        reading non-secret workspace files only')
    expect(await enabled()).toEqual([])
    expect(JSON.parse((await cli(['task', 'list', '--json'])).out).tasks[0].state).toBe('paused')
    expect((await cli(['task', 'remove', 'digest'])).code).toBe(0)
  })

  it('refuses bad input with usage exit codes and writes nothing', async () => {
    const before = readdirSync(join(stack.dir, 'knowledge/tasks'))
    const cases: [string[], string][] = [
      [['task', 'create', '../x', '--prompt', 'p'], 'a task id is'],
      [['task', 'create', 'a', '--prompt', 'p', '--schedule', '*/5 * * * * *'], 'five cron fields'],
      [['task', 'create', 'a', '--prompt', 'p', '--schedule', '61 * * * *'], 'not a valid cron expression'],
      [['task', 'create', 'a', '--prompt', 'p', '--timeout', '7h'], 'timeout: must be a duration'],
      [['task', 'create', 'a', '--prompt', 'p', '--output', '../../state/x.md'], 'output:'],
      [
        ['task', 'create', 'a', '--prompt', 'p', '--output', 'secrets/auth.md'],
        'must not be inside knowledge/secrets/',
      ],
      [['task', 'create', 'a', '--prompt', 'p', '--model', 'nomodel'], 'model: must be "provider/model"'],
      [['task', 'create', 'a', '--prompt', '   '], 'prompt: must not be empty'],
    ]
    for (const [args, message] of cases) {
      const result = await cli(args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.err, args.join(' ')).toContain(message)
    }
    expect(readdirSync(join(stack.dir, 'knowledge/tasks'))).toEqual(before)
    expect(await enabled()).toEqual([])
  })

  it('validates: an invalid source next to a valid one is reported (exit 9), the valid one listed', async () => {
    const tasks = join(stack.dir, 'knowledge/tasks')
    writeFileSync(join(tasks, 'good.yml'), 'version: 1\nschedule: "@daily"\nprompt: fine\n')
    writeFileSync(join(tasks, 'loud.yml'), 'version: 1\nprompt: x\nenabled: true\n')
    writeFileSync(join(tasks, 'huge.yml'), `version: 1\nprompt: "${'x'.repeat(1024 * 1024)}"\n`)
    writeFileSync(join(stack.root, 'outside.yml'), 'version: 1\nprompt: outside\n')
    symlinkSync(join(stack.root, 'outside.yml'), join(tasks, 'linked.yml'))
    const result = await cli(['task', 'validate', '--json'])
    expect(result.code).toBe(9)
    const report = JSON.parse(result.out)
    expect(report.valid).toEqual(['good'])
    expect(
      Object.fromEntries(report.invalid.map((i: { file: string; problem: string }) => [i.file, i.problem])),
    ).toEqual({
      'huge.yml': 'larger than 1048576 bytes',
      'linked.yml': 'linked.yml is a symbolic link',
      'loud.yml': expect.stringContaining('enabled: not allowed in a task source'),
    })
    const list = JSON.parse((await cli(['task', 'list', '--json'])).out)
    expect(list.tasks.map((t: { id: string; state: string }) => `${t.id}:${t.state}`)).toEqual([
      'good:paused',
    ])
    for (const name of ['good.yml', 'loud.yml', 'huge.yml', 'linked.yml'])
      await cli(['task', 'remove', name.slice(0, -4)])
  })

  it('`task sync` without a scheduler validates only; with one, asks it and reports its bindings', async () => {
    const offline = await cli(['task', 'sync'])
    expect(offline.code).toBe(0)
    expect(offline.out).toContain('the scheduler is not running; validated only')
    const requests: unknown[] = []
    const control = await serveControl(join(stack.dir, 'state/scheduler.sock'), async (request) => {
      requests.push(request)
      return {
        ok: true,
        at: '2026-11-27T00:00:00.000Z',
        timezone: 'UTC',
        bound: [{ id: 'x', next: '2026-11-28T07:00:00.000Z' }],
        paused: [],
        manual: [],
        invalid: [],
      }
    })
    try {
      const online = await cli(['task', 'sync', '--rebind'])
      expect(online.code, online.err).toBe(0)
      expect(online.out).toContain('1 scheduled')
      expect(online.out).toContain('x  next 2026-11-28T07:00:00.000Z')
      expect(requests).toEqual([{ op: 'sync', rebind: true }])
    } finally {
      await control.close()
    }
  })

  it('rolls a change back when the running scheduler refuses it (exit 8)', async () => {
    const control = await serveControl(join(stack.dir, 'state/scheduler.sock'), async () => ({
      ok: false,
      at: '2026-11-27T00:00:00.000Z',
      error: 'sallyport.json is not valid JSON',
    }))
    try {
      const result = await cli(['task', 'create', 'refused', '--schedule', '@hourly', '--prompt', 'x'])
      expect(result.code).toBe(8)
      expect(result.err).toContain('the change was rolled back')
      expect(existsSync(join(stack.dir, 'knowledge/tasks/refused.yml'))).toBe(false)
      expect(await enabled()).toEqual([])
    } finally {
      await control.close()
    }
  })

  it('`task run` needs the running scheduler (exit 8 with the reason)', async () => {
    expect((await cli(['task', 'create', 'manual', '--prompt', 'x'])).code).toBe(0)
    const result = await cli(['task', 'run', 'manual'])
    expect(result.code).toBe(8)
    expect(result.err).toContain('the scheduler is not running (start the stack with `sallyport up`)')
    expect((await cli(['task', 'remove', 'manual'])).code).toBe(0)
  })
})

describe('sallyport env run user', () => {
  it('gives user.env to that one command only, with its exit code, and never prints a value', async () => {
    mkdirSync(join(stack.dir, 'knowledge/env'), { recursive: true })
    const file = join(stack.dir, 'knowledge/env/user.env')
    writeFileSync(file, '# calendar\nexport CAL_TOKEN="s3cr3t-value-123"\nPLAIN=plain value # comment\n', {
      mode: 0o600,
    })
    chmodSync(file, 0o600)
    const script =
      'process.stdout.write(String(process.env.CAL_TOKEN === "s3cr3t-value-123") + " " + process.env.PLAIN); process.exit(3)'
    const result = await runCli([
      'env',
      'run',
      'user',
      '--dir',
      stack.dir,
      '--',
      process.execPath,
      '-e',
      script,
    ])
    expect(result.code).toBe(3)
    expect(result.stdout).toBe('true plain value')
    expect(result.stderr).not.toContain('s3cr3t')
    // Not in the CLI's own environment afterwards, nor in another command's.
    const other = await runCli([
      'env',
      'run',
      'user',
      '--dir',
      stack.dir,
      '--',
      process.execPath,
      '-e',
      'process.exit(0)',
    ])
    expect(other.code).toBe(0)
  })

  it('refuses a user.env readable by others, a forbidden name, and a missing command', async () => {
    const file = join(stack.dir, 'knowledge/env/user.env')
    chmodSync(file, 0o644)
    const loose = await runCli(['env', 'run', 'user', '--dir', stack.dir, '--', 'true'])
    expect(loose.code).toBe(6)
    expect(loose.stderr).toContain('readable by others')
    writeFileSync(file, 'LD_PRELOAD=/tmp/x.so\n', { mode: 0o600 })
    chmodSync(file, 0o600)
    const preload = await runCli(['env', 'run', 'user', '--dir', stack.dir, '--', 'true'])
    expect(preload.code).toBe(3)
    expect(preload.stderr).toContain('user.env line 1: LD_PRELOAD may not be set')
    const none = await runCli(['env', 'run', 'user', '--dir', stack.dir])
    expect(none.code).toBe(2)
  })
})
