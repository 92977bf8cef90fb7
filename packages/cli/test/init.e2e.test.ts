import { lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { PLUGIN_WRAPPER_FILE, pluginWrapperSource } from '@sallyport/runtime-guard'
import { TASKS_PLUGIN_WRAPPER_FILE, tasksPluginWrapperSource } from '@sallyport/scheduler'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli, tempDir } from './cli-process.ts'

interface Snapshot {
  [path: string]: { mode: number; mtimeMs: number; ino: number; size: number }
}

/** Every path under `root` with its mode, mtime, inode and size. */
function snapshot(root: string): Snapshot {
  const out: Snapshot = {}
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      const info = lstatSync(path)
      out[relative(root, path)] = {
        mode: info.mode & 0o7777,
        mtimeMs: info.mtimeMs,
        ino: info.ino,
        size: info.size,
      }
      if (entry.isDirectory()) walk(path)
    }
  }
  walk(root)
  return out
}

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8)

let cleanup: (() => void) | undefined
const cleanups: Array<() => void> = []
afterEach(() => {
  cleanup?.()
  for (const c of cleanups.splice(0)) c()
})

describe('sallyport init (built CLI)', () => {
  it('creates the stack layout with exact modes, and a second run changes nothing', async () => {
    const temp = tempDir()
    cleanup = temp.remove
    const dir = join(temp.path, 'stack')
    const first = await runCli(['init', '--dir', dir, '--json'])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const report = JSON.parse(first.stdout) as {
      entries: { path: string; action: string }[]
      credentialsCreated: string[]
    }
    expect(report.entries.every((e) => e.action === 'created')).toBe(true)
    expect(report.credentialsCreated.sort()).toEqual(['discord', 'owner', 'slack'])

    // Secrets: 0600 files in 0700 directories, outside workspace/.
    for (const file of [
      'state/handle-secret',
      'state/native-password',
      'state/moderator-password',
      'state/stack.env',
      'state/credentials/owner/key',
      'state/credentials/discord/key',
      'state/credentials/slack/key',
      'knowledge/secrets/auth.json',
      'config/akm/config.json',
      'config/assistant/opencode.json',
    ]) {
      expect([file, mode(join(dir, file))]).toEqual([file, '600'])
    }
    for (const d of [
      'state',
      'state/credentials',
      'state/assistant',
      'state/moderator',
      'knowledge',
      'knowledge/secrets',
      'knowledge/tasks',
      'knowledge/disabled-tasks',
      'config/akm',
    ]) {
      expect([d, mode(join(dir, d))]).toEqual([d, '700'])
    }
    // Managed directories are read-only; their files too.
    for (const d of [
      'system/assistant',
      'system/assistant/plugins',
      'system/moderator',
      'config/assistant',
    ]) {
      expect([d, mode(join(dir, d))]).toEqual([d, '555'])
    }
    expect(mode(join(dir, 'system/assistant/opencode.json'))).toBe('444')
    expect(mode(join(dir, 'config/opencode/opencode.json'))).toBe('644')
    expect(mode(join(dir, 'workspace'))).toBe('755')
    expect(readFileSync(join(dir, 'knowledge/secrets/auth.json'), 'utf8').trim()).toBe('{}')
    expect(readFileSync(join(dir, 'state/stack.env'), 'utf8').split('\n')[0]).toMatch(/GENERATED.*NEVER edit/)

    // The agent profiles: wildcard denial for chat and read, question allowed where a profile asks.
    const managed = JSON.parse(readFileSync(join(dir, 'system/assistant/opencode.json'), 'utf8'))
    expect(managed.agent.remote.permission).toEqual({ '*': 'deny', question: 'allow' })
    expect(Object.keys(managed.agent['remote-read'].permission)[0]).toBe('*')
    expect(managed.agent['remote-read'].permission).toMatchObject({ '*': 'deny', question: 'allow' })
    // Reading is allowed except secret files, in this order (the runtime lets the last match win).
    const readRules = managed.agent['remote-read'].permission.read
    expect(Object.keys(readRules)[0]).toBe('*')
    expect(readRules).toMatchObject({ '*': 'allow', '*.env': 'deny', '*.pem': 'deny' })
    expect(Object.keys(readRules).at(-1)).toBe('*/.env.example')
    expect(managed.agent['remote-read'].permission.grep).toBeUndefined()
    expect(managed.agent['remote-full'].permission).toMatchObject({
      question: 'allow',
      bash: 'ask',
      edit: 'ask',
      webfetch: 'ask',
      task: 'deny',
      grep: 'deny',
      external_directory: 'deny',
      read: readRules,
    })
    // The runtime guard's wrapper: release text, read-only, loaded from plugins/.
    const wrapper = join(dir, 'system/assistant/plugins', PLUGIN_WRAPPER_FILE)
    expect(readFileSync(wrapper, 'utf8')).toBe(pluginWrapperSource())
    expect(mode(wrapper)).toBe('444')
    // The task tools' wrapper beside it; no task is seeded.
    const tasksWrapper = join(dir, 'system/assistant/plugins', TASKS_PLUGIN_WRAPPER_FILE)
    expect(readFileSync(tasksWrapper, 'utf8')).toBe(tasksPluginWrapperSource())
    expect(mode(tasksWrapper)).toBe('444')
    expect(readdirSync(join(dir, 'knowledge/tasks'))).toEqual([])
    expect(managed.agent.scheduled.permission['*']).toBe('deny')
    const instructions = readFileSync(join(dir, 'system/assistant/instructions/sallyport.md'), 'utf8')
    expect(instructions).toMatch(/untrusted/)
    expect(instructions).toMatch(/Never disclose secrets/)

    const config = JSON.parse(readFileSync(join(dir, 'sallyport.json'), 'utf8'))
    expect(config).toMatchObject({
      gateway: { host: '127.0.0.1', port: 8787 },
      native: { host: '127.0.0.1', port: 'auto' },
      moderator: { port: 4097 },
    })
    expect(typeof config.assistant.timezone).toBe('string')
    // Activation is not in sallyport.json (read-only in the container) but in config/akm, empty.
    expect(config.scheduler).toBeUndefined()
    const engine = JSON.parse(readFileSync(join(dir, 'config/akm/config.json'), 'utf8'))
    expect(engine).toMatchObject({ engine: { agent: 'scheduled' }, scheduler: { enabled: [] } })

    const before = snapshot(dir)
    const second = await runCli(['init', '--dir', dir])
    expect(second.code).toBe(0)
    expect(second.stdout).not.toMatch(/^created/m)
    expect(second.stdout).toMatch(/nothing to create/)
    expect(snapshot(dir)).toEqual(before)
  })

  it('never overwrites a key, a secret or an edited file, and recreates only what is missing', async () => {
    const temp = tempDir()
    cleanup = temp.remove
    const dir = join(temp.path, 'stack')
    expect((await runCli(['init', '--dir', dir])).code).toBe(0)
    const ownerKey = readFileSync(join(dir, 'state/credentials/owner/key'), 'utf8')
    const secret = readFileSync(join(dir, 'state/handle-secret'))
    writeFileSync(join(dir, 'knowledge/secrets/auth.json'), '{"openai":{"type":"api","key":"sk-x"}}\n')
    const { rmSync } = await import('node:fs')
    rmSync(join(dir, 'knowledge/tasks'), { recursive: true })

    const again = await runCli(['init', '--dir', dir, '--json'])
    expect(again.code).toBe(0)
    const created = (JSON.parse(again.stdout) as { entries: { path: string; action: string }[] }).entries
      .filter((e) => e.action === 'created')
      .map((e) => e.path)
    expect(created).toEqual(['knowledge/tasks/'])
    expect(readFileSync(join(dir, 'state/credentials/owner/key'), 'utf8')).toBe(ownerKey)
    expect(readFileSync(join(dir, 'state/handle-secret'))).toEqual(secret)
    expect(readFileSync(join(dir, 'knowledge/secrets/auth.json'), 'utf8')).toMatch(/sk-x/)
  })

  it('keeps a higher-priority preferences file and does not seed opencode.json next to it', async () => {
    const temp = tempDir()
    cleanup = temp.remove
    const dir = join(temp.path, 'stack')
    const { mkdirSync } = await import('node:fs')
    mkdirSync(join(dir, 'config/assistant'), { recursive: true })
    writeFileSync(join(dir, 'config/assistant/opencode.jsonc'), '// mine\n{}\n', { mode: 0o600 })
    const run = await runCli(['init', '--dir', dir])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/User preferences: config\/assistant\/opencode\.jsonc/)
    expect(readdirSync(join(dir, 'config/assistant'))).not.toContain('opencode.json')
  })

  it('rejects an invalid sallyport.json with one clear line and exit code 3', async () => {
    const temp = tempDir()
    cleanup = temp.remove
    const dir = join(temp.path, 'stack')
    expect((await runCli(['init', '--dir', dir])).code).toBe(0)
    const file = join(dir, 'sallyport.json')
    const config = JSON.parse(readFileSync(file, 'utf8'))
    config.gateway.port = 70000
    writeFileSync(file, JSON.stringify(config))
    const run = await runCli(['init', '--dir', dir])
    expect(run.code).toBe(3)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toMatch(/^sallyport: sallyport\.json: gateway\.port: /)
  })
})

describe('sallyport init --container and sallyport health (built CLI)', () => {
  it('--container binds the gateway of a new stack to 0.0.0.0; a plain init keeps loopback', async () => {
    const temp = tempDir()
    cleanups.push(temp.remove)
    const host = (dir: string): string =>
      (JSON.parse(readFileSync(join(dir, 'sallyport.json'), 'utf8')) as { gateway: { host: string } }).gateway
        .host
    const image = join(temp.path, 'image')
    expect((await runCli(['init', '--dir', image, '--container'])).code).toBe(0)
    expect(host(image)).toBe('0.0.0.0')
    const local = join(temp.path, 'local')
    expect((await runCli(['init', '--dir', local])).code).toBe(0)
    expect(host(local)).toBe('127.0.0.1')
  })

  it('health exits 9 with one line when the gateway of the stack does not answer, 3 without a stack', async () => {
    const temp = tempDir()
    cleanups.push(temp.remove)
    const dir = join(temp.path, 'stack')
    expect((await runCli(['health', '--dir', dir])).code).toBe(3)
    expect((await runCli(['init', '--dir', dir])).code).toBe(0)
    const config = JSON.parse(readFileSync(join(dir, 'sallyport.json'), 'utf8'))
    config.gateway.port = 1 // nothing listens there
    writeFileSync(join(dir, 'sallyport.json'), JSON.stringify(config))
    const down = await runCli(['health', '--dir', dir, '--timeout-ms', '1000'])
    expect(down.code).toBe(9)
    expect(down.stderr).toBe(`sallyport: the gateway at http://127.0.0.1:1/health is not healthy\n`)
  })
})
