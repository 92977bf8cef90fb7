import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, type ModelServer, startModelServer, waitFor } from '@sallyport/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { runCli, tempDir } from './cli-process.ts'
import { editConfig, mcpClient, useScriptedModel } from './stack-fixture.ts'

// The container image, built and run: the local base (no registry: Debian from debootstrap, Node
// from npm; cached by content), the Dockerfile, then the container started the way compose.yaml
// describes — its mounts and environment read from the file itself, uid 10001, a stack made by
// `sallyport init --container` — until the HEALTHCHECK turns healthy; then `doctor` inside, one
// MCP tools/list and one completed gateway.agent.run with the scripted model, and a clean stop.
//
// The engine here has no bridge network (`dockerd --bridge=none`), so the container shares the
// host's network (`--network host`) instead of compose's published port; everything else is
// what compose.yaml says. Compose itself is not run: compose.yaml targets Compose v2, and the
// Debian engine ships Compose v1 only (which rejects `create_host_path`).

const REPO = join(import.meta.dirname, '..', '..', '..')
const IMAGE = 'sallyport:e2e'

/** Whether a Docker engine answers and debootstrap can run (root). */
function engineReady(): boolean {
  if (process.getuid?.() !== 0) return false
  return spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 20_000 }).status === 0
}
const ENGINE = engineReady()

function docker(args: string[], options: { timeoutMs?: number; allowFail?: boolean } = {}): string {
  const result = spawnSync('docker', args, {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    timeout: options.timeoutMs ?? 120_000,
  })
  if (result.status !== 0 && !options.allowFail)
    throw new Error(
      `docker ${args[0]} failed (${result.status}): ${(result.stderr || result.stdout).slice(-4000)}`,
    )
  return result.stdout.trim()
}

/** Extra CA certificates of this machine (a TLS-intercepting proxy), for the build's npm traffic. */
function localCaCertificates(): string | undefined {
  const dir = '/usr/local/share/ca-certificates'
  if (!existsSync(dir)) return undefined
  const pems = readdirSync(dir)
    .filter((f) => f.endsWith('.crt'))
    .map((f) => readFileSync(join(dir, f), 'utf8').trim())
  return pems.length > 0 ? pems.join('\n') : undefined
}

type Volume =
  | string
  | { type: string; source: string; target: string; read_only?: boolean; bind?: Record<string, unknown> }

/** compose.yaml's volumes as `docker run` flags, with the stack directory put in. */
function composeMounts(stack: string): string[] {
  const compose = parse(readFileSync(join(REPO, 'compose.yaml'), 'utf8')) as {
    services: { sallyport: { volumes: Volume[] } }
  }
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal compose variable
  const put = (path: string): string => path.replace('${SALLYPORT_STACK:-./stack}', stack)
  return compose.services.sallyport.volumes.flatMap((volume) => {
    if (typeof volume === 'string') {
      const match = /^(\$\{[^}]+\}[^:]*):([^:]+)(?::(ro|rw))?$/.exec(volume)
      if (!match) throw new Error(`unexpected volume: ${volume}`)
      return ['--volume', `${put(match[1] as string)}:${match[2]}${match[3] === 'ro' ? ':ro' : ''}`]
    }
    // create_host_path: false is what --mount does anyway: a missing source fails the run.
    const readonly = volume.read_only ? ',readonly' : ''
    return ['--mount', `type=bind,source=${put(volume.source)},target=${volume.target}${readonly}`]
  })
}

describe.skipIf(!ENGINE)(
  'the container image, built and run (skipped only where no Docker engine runs as root)',
  () => {
    let model: ModelServer
    let container: string | undefined
    const cleanups: Array<() => void> = []

    beforeAll(async () => {
      model = await startModelServer()
      const base = execFileSync('bash', [join(REPO, 'scripts/image/build-base.sh')], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        timeout: 900_000,
      })
        .trim()
        .split('\n')
        .at(-1) as string
      expect(base).toMatch(/^sallyport-base:[0-9a-f]{16}$/)
      const ca = localCaCertificates()
      docker(
        [
          'build',
          '--network',
          'host',
          '--build-arg',
          `BASE_IMAGE=${base}`,
          ...(ca ? ['--build-arg', `EXTRA_CA_CERT=${ca}`] : []),
          '--tag',
          IMAGE,
          REPO,
        ],
        { timeoutMs: 1_500_000 },
      )
    }, 1_800_000)

    afterAll(async () => {
      if (container) docker(['rm', '--force', container], { allowFail: true })
      for (const cleanup of cleanups.reverse()) cleanup()
      await model?.close()
    })

    it('a second base build reuses the cached base image (content hash)', () => {
      const started = Date.now()
      const again = execFileSync('bash', [join(REPO, 'scripts/image/build-base.sh')], { encoding: 'utf8' })
      expect(again.trim()).toMatch(/^sallyport-base:[0-9a-f]{16}$/)
      expect(Date.now() - started).toBeLessThan(15_000)
    })

    it('runs as compose.yaml describes: healthy, doctor clean inside, tools/list, a completed agent.run, a clean stop', async () => {
      const temp = tempDir('sallyport-image-')
      cleanups.push(temp.remove)
      const stack = join(temp.path, 'stack')
      const init = await runCli(['init', '--dir', stack, '--container'])
      expect(init.code, init.stderr).toBe(0)
      const [gatewayPort, nativePort, moderatorPort] = [await freePort(), await freePort(), await freePort()]
      editConfig(stack, (c) => {
        expect(c.gateway.host).toBe('0.0.0.0')
        c.gateway.port = gatewayPort
        c.native.port = nativePort
        c.moderator.port = moderatorPort
      })
      useScriptedModel(stack, model.baseURL)
      // What compose.yaml's header tells the operator to hand to the container user.
      execFileSync('chown', [
        '-R',
        '10001:10001',
        ...['state', 'workspace', 'config/akm', 'knowledge', 'config/assistant/opencode.json'].map((p) =>
          join(stack, p),
        ),
      ])

      container = `sallyport-e2e-${process.pid}`
      docker([
        'run',
        '--detach',
        '--name',
        container,
        '--network',
        'host',
        // The Dockerfile's check, run more often so the test need not wait 30 s per round.
        '--health-interval',
        '2s',
        '--env',
        'GATEWAY_ALLOWED_ORIGINS=',
        ...composeMounts(stack),
        IMAGE,
      ])
      const name = container
      const state = (): { status: string; health?: string; exitCode: number } => {
        const raw = docker(['inspect', '--format', '{{json .State}}', name])
        const parsed = JSON.parse(raw) as { Status: string; ExitCode: number; Health?: { Status: string } }
        return {
          status: parsed.Status,
          exitCode: parsed.ExitCode,
          ...(parsed.Health && { health: parsed.Health.Status }),
        }
      }
      const health = await waitFor(
        () => {
          const now = state()
          if (now.status !== 'running') return `exited ${now.exitCode}`
          return now.health === 'healthy' ? 'healthy' : undefined
        },
        { timeoutMs: 180_000, intervalMs: 1_000, description: 'the container to turn healthy' },
      )
      const logs = (): string => docker(['logs', name], { allowFail: true }).slice(-4000)
      expect(health, logs()).toBe('healthy')
      // Every process of the container runs as uid 10001 (tini, up, both runtimes).
      const uids = docker(['top', name, '-o', 'pid,uid,comm'])
        .split('\n')
        .slice(1)
        .map((line) => line.trim().split(/\s+/)[1])
      expect(uids.length).toBeGreaterThanOrEqual(4)
      expect(new Set(uids)).toEqual(new Set(['10001']))

      // Asynchronous: doctor's model readiness check asks the scripted model, which answers from
      // this process (a spawnSync here blocked it: the model saw no request within 90 s).
      const doctor = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
        execFile(
          'docker',
          [
            'exec',
            name,
            'node',
            '/opt/sallyport/node_modules/sallyport/dist/bin.js',
            'doctor',
            '--json',
            '--model-timeout-ms',
            '90000',
          ],
          { encoding: 'utf8', timeout: 150_000 },
          (_error, stdout, stderr) => resolve({ stdout, stderr }),
        )
      })
      const report = JSON.parse(doctor.stdout) as {
        checks: Array<{ name: string; status: string; detail: string }>
      }
      expect(report.checks.filter((c) => c.status === 'fail')).toEqual([])
      expect(report.checks.find((c) => c.name === 'permissions')?.status).toBe('ok')
      expect(report.checks.find((c) => c.name === 'gateway')?.status).toBe('ok')
      expect(report.checks.find((c) => c.name === 'scheduler')?.status).toBe('ok')
      expect(report.checks.find((c) => c.name === 'model readiness')?.status).toBe('ok')

      const key = readFileSync(join(stack, 'state/credentials/owner/key'), 'utf8').trim()
      const client = await mcpClient(`http://127.0.0.1:${gatewayPort}/mcp`, key)
      expect((await client.listTools()).tools).toHaveLength(11)
      const marker = model.script([{ text: 'answered from inside the image' }])
      const result = (await client.callTool({
        name: 'gateway.agent.run',
        arguments: { message: `hello ${marker}`, waitMs: 30_000 },
      })) as { structuredContent?: Record<string, unknown> }
      await client.close()
      expect(result.structuredContent, logs()).toMatchObject({
        status: 'completed',
        text: 'answered from inside the image',
      })

      // The scheduler inside: a task created with the CLI in the container (sallyport.json is a
      // read-only mount there; activation lives in config/akm) runs through the native server.
      // Asynchronous: the scripted model answers from this process, so it must not be blocked.
      const cliIn = (...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> =>
        new Promise((resolve) => {
          execFile(
            'docker',
            ['exec', name, 'node', '/opt/sallyport/node_modules/sallyport/dist/bin.js', ...args],
            { encoding: 'utf8', timeout: 120_000 },
            (error, stdout, stderr) =>
              resolve({
                status: error ? Number((error as { code?: unknown }).code ?? 1) : 0,
                stdout,
                stderr,
              }),
          )
        })
      const taskMarker = model.script([{ text: 'a task answered inside the image' }])
      const created = await cliIn(
        'task',
        'create',
        'digest',
        '--schedule',
        '@daily',
        '--prompt',
        `Digest ${taskMarker}`,
      )
      expect(created.status, created.stderr).toBe(0)
      expect(created.stdout).toContain('the running scheduler has the change')
      // Exit 0 only for a completed run; its record is in the history on the host's mount.
      const ran = await cliIn('task', 'run', 'digest')
      expect(ran.status, `${ran.stderr}\n${logs()}`).toBe(0)
      const history = readFileSync(join(stack, 'knowledge/task-history/digest.jsonl'), 'utf8')
        .trim()
        .split('\n')
      const record = JSON.parse(history.at(-1) as string) as {
        outcome: string
        trigger: string
        output: string
      }
      expect(record).toMatchObject({ outcome: 'completed', trigger: 'manual' })
      expect(readFileSync(join(stack, 'knowledge', record.output), 'utf8')).toBe(
        'a task answered inside the image\n',
      )

      docker(['stop', '--time', '20', name], { timeoutMs: 60_000 })
      expect(state()).toMatchObject({ status: 'exited', exitCode: 0 })
      expect(docker(['logs', name], { allowFail: true })).not.toContain(key)
    }, 600_000)
  },
)
