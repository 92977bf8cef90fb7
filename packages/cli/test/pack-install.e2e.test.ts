import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, type ModelServer, startModelServer, waitFor } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { alive, cliEnv, tempDir } from './cli-process.ts'
import { editConfig, type LogLine, logLines, mcpClient, useScriptedModel } from './stack-fixture.ts'

// What a user gets from npm, exercised: every publishable package is packed (pnpm rewrites the
// workspace ranges as it would on publish), the CLI is installed from those tarballs into an empty
// directory with plain npm — no workspace, no pnpm, no dev dependencies (scripts/pack-install.sh,
// which the container image uses too) — and the INSTALLED
// binary runs the whole path: --help, init, doctor, up with the scripted model, tools/list, one
// agent.run that completes, a clean stop. It proves the runtime binary is found in an npm
// layout, that `files`/`exports` ship what is needed and that nothing of the dev tree is needed.

const REPO = join(import.meta.dirname, '..', '..', '..')

/** The packages a user can install: every workspace package that is not private. */
function publishable(): Array<{ dir: string; name: string }> {
  return readdirSync(join(REPO, 'packages'))
    .map((dir) => join(REPO, 'packages', dir))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ dir, manifest }) => ({ dir, name: manifest.name as string }))
}

function run(command: string, args: string[], cwd: string, env: Record<string, string>): string {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 })
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.status}):\n${result.stderr}\n${result.stdout}`,
    )
  return result.stdout
}

let model: ModelServer
let app: string
let home: string
let bin: string
const cleanups: Array<() => void | Promise<void>> = []

beforeAll(async () => {
  model = await startModelServer()
  const temp = tempDir('sallyport-pack-')
  cleanups.push(temp.remove)
  app = join(temp.path, 'app')
  // The runtime's postinstall runs `opencode --version` with HOME: keep it out of the real one.
  home = join(temp.path, 'home')
  mkdirSync(home, { recursive: true })
  // The same script builds the container image's /opt/sallyport.
  run('bash', [join(REPO, 'scripts/pack-install.sh'), app], REPO, cliEnv({ HOME: home }))
  bin = join(app, 'node_modules', '.bin', 'sallyport')
}, 300_000)

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await model?.close()
})

/** Runs the installed binary to completion, from the user's directory, with only npm's tree. */
function installed(args: string[]) {
  return spawnSync(bin, args, { cwd: app, env: cliEnv({ HOME: home }), encoding: 'utf8' })
}

describe('sallyport installed from the packed tarballs with plain npm', () => {
  it('installs every publishable package and none of the dev tree', () => {
    const modules = join(app, 'node_modules')
    const names = publishable().map((p) => p.name)
    expect(names).toContain('sallyport')
    for (const name of names) expect(existsSync(join(modules, name, 'package.json')), name).toBe(true)
    for (const dev of ['msw', 'typescript', 'vitest', '@sallyport/testkit', 'tsup', 'fast-check'])
      expect(existsSync(join(modules, dev)), `${dev} must not be installed`).toBe(false)
    // Every @sallyport dependency was satisfied by a tarball (no workspace: range left behind).
    for (const name of names) {
      const manifest = readFileSync(join(modules, name, 'package.json'), 'utf8')
      expect(manifest, name).not.toMatch(/workspace:|catalog:/)
    }
  })

  it('--help explains the commands', () => {
    const help = installed(['--help'])
    expect(help.status).toBe(0)
    for (const command of ['init', 'credential', 'config', 'up', 'serve', 'attach', 'doctor'])
      expect(help.stdout).toContain(`sallyport ${command}`)
  })

  it('init, doctor, up with the scripted model, tools/list and a completed agent.run, then a clean stop', async () => {
    const dir = join(app, 'stack')
    const init = installed(['init', '--dir', dir])
    expect(init.status, init.stderr).toBe(0)
    // Free ports first: a stack on the defaults elsewhere on the machine would fail doctor's probes.
    const [gatewayPort, nativePort, moderatorPort] = [await freePort(), await freePort(), await freePort()]
    editConfig(dir, (c) => {
      c.gateway.port = gatewayPort
      c.native.port = nativePort
      c.moderator.port = moderatorPort
    })
    const doctor = installed(['doctor', '--dir', dir, '--json'])
    expect(doctor.status, doctor.stdout + doctor.stderr).toBe(0)
    const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string }> }).checks
    // The runtime binary and the guard plugin are found in an npm layout.
    expect(checks.find((c) => c.name === 'runtime')?.status).toBe('ok')
    expect(checks.find((c) => c.name === 'runtime guard')?.status).toBe('ok')
    expect(checks.filter((c) => c.status === 'fail')).toEqual([])

    useScriptedModel(dir, model.baseURL)
    const up = spawn(bin, ['up', '--dir', dir, '--stop-grace-ms', '3000'], {
      cwd: app,
      env: cliEnv({ HOME: home }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    up.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    up.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = new Promise<number | null>((resolve) => up.once('exit', (code) => resolve(code)))
    cleanups.push(() => {
      if (up.exitCode === null) up.kill('SIGKILL')
    })
    // An early exit ends the wait at once (waitFor retries a check that throws).
    const outcome = await waitFor(
      () =>
        up.exitCode !== null
          ? { exited: true as const }
          : logLines(stdout).find((line: LogLine) => line.event === 'ready'),
      { timeoutMs: 90_000, description: 'the installed stack to be ready' },
    )
    if ('exited' in outcome) throw new Error(`up exited early: ${stderr}\n${stdout.slice(-2000)}`)
    const ready = outcome
    const pids = logLines(stdout)
      .filter((l) => l.event === 'child_started' && typeof l.pid === 'number')
      .map((l) => l.pid as number)
    expect(pids).toHaveLength(3) // assistant, moderator, scheduler

    const key = readFileSync(join(dir, 'state/credentials/owner/key'), 'utf8').trim()
    const client = await mcpClient(String(ready.mcpUrl), key)
    const tools = (await client.listTools()).tools.map((t) => t.name)
    expect(tools).toContain('gateway.agent.run')
    expect(tools).toHaveLength(11)
    const marker = model.script([{ text: 'installed from npm and working' }])
    const result = (await client.callTool({
      name: 'gateway.agent.run',
      arguments: { message: `hello ${marker}`, waitMs: 30_000 },
    })) as { isError?: boolean; structuredContent?: Record<string, unknown> }
    await client.close()
    expect(result.structuredContent).toMatchObject({
      status: 'completed',
      text: 'installed from npm and working',
    })

    up.kill('SIGTERM')
    expect(await exited).toBe(0)
    for (const pid of pids) expect(alive(pid)).toBe(false)
    expect(stdout).not.toContain(key)
  }, 180_000)
})
