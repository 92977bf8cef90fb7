import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { validate } from 'dockerfile-utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { initStack } from '../src/commands/init.ts'
import { stackLayout } from '../src/stack/layout.ts'
import { RUNTIME_VERSION } from '../src/stack/managed-files.ts'
import { tempDir } from './cli-process.ts'

// The image files are linted (dockerfile-utils, the linter of the Docker language server) and
// checked against what `sallyport init` creates and what `up` expects. The image itself is built
// and run by image-run.e2e.test.ts where a Docker engine runs.

const repo = join(import.meta.dirname, '..', '..', '..')
const dockerfile = readFileSync(join(repo, 'Dockerfile'), 'utf8')
const compose = parse(readFileSync(join(repo, 'compose.yaml'), 'utf8')) as {
  services: { sallyport: { volumes: Volume[]; environment: Record<string, string>; ports: string[] } }
}
const service = compose.services.sallyport
// biome-ignore lint/suspicious/noTemplateCurlyInString: the literal compose variable, not a template
const STACK_VAR = '${SALLYPORT_STACK:-./stack}/'

/** The final stage's instructions as [keyword, rest] pairs. */
function finalStage(): [string, string][] {
  const joined = dockerfile.replace(/\\\n\s*/g, ' ')
  const lines = joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  const lastFrom = lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true)
  return lines.slice(lastFrom).map((l) => {
    const at = l.indexOf(' ')
    return [l.slice(0, at), l.slice(at + 1)]
  })
}

function envOf(stage: [string, string][]): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [keyword, rest] of stage) {
    if (keyword !== 'ENV') continue
    for (const match of rest.matchAll(/([A-Z_]+)=(\S+)/g)) env[match[1]!] = match[2]!
  }
  return env
}

/** A compose volume: the short syntax (a string) or the long one (an object). */
type Volume =
  | string
  | { type: string; source: string; target: string; read_only?: boolean; bind?: Record<string, unknown> }

interface Mount {
  host: string
  container: string
  readOnly: boolean
}

const mounts: Mount[] = service.volumes.map((spec) => {
  if (typeof spec !== 'string') {
    if (spec.type !== 'bind') throw new Error(`unexpected volume type: ${spec.type}`)
    return { host: spec.source, container: spec.target, readOnly: spec.read_only === true }
  }
  // `${VAR:-default}/path:/container[:ro]` — the variable's default contains a colon itself.
  const match = /^(\$\{[^}]+\}[^:]*):([^:]+)(?::(ro|rw))?$/.exec(spec)
  if (!match) throw new Error(`unexpected volume syntax: ${spec}`)
  return { host: match[1] ?? '', container: match[2] ?? '', readOnly: match[3] === 'ro' }
})

let stackDir: string
let cleanup: () => void
beforeAll(async () => {
  const temp = tempDir()
  cleanup = temp.remove
  stackDir = join(temp.path, 'stack')
  await initStack({ dir: stackDir, env: {} })
})
afterAll(() => cleanup())

describe('Dockerfile', () => {
  it('passes the Dockerfile linter without errors or warnings', () => {
    const problems = validate(dockerfile).map((d) => `${d.range.start.line + 1}: ${d.message}`)
    expect(problems).toEqual([])
    // …and the linter does report problems (a check that cannot fail proves nothing).
    expect(validate('FROM node:20-bookworm-slim\nEXPOSE abc\nHEALTHCHECK CMD\n').length).toBeGreaterThan(0)
  })

  it('runs on a Node LTS slim image as a non-root user, with tini and a health check that follows the stack file', () => {
    const stage = finalStage()
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's literal build argument
    expect(stage[0]).toEqual(['FROM', '${BASE_IMAGE}'])
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=node:20-bookworm-slim$/m)
    const user = stage.filter(([k]) => k === 'USER').at(-1)?.[1]
    expect(user).toBeDefined()
    expect(['root', '0']).not.toContain(user)
    const health = stage.find(([k]) => k === 'HEALTHCHECK')?.[1] ?? ''
    // No address baked in: `sallyport health` reads gateway.host and gateway.port of the stack.
    expect(health).toContain('"/opt/sallyport/node_modules/sallyport/dist/bin.js", "health"')
    expect(health).not.toMatch(/8787/)
    expect(stage.find(([k]) => k === 'ENTRYPOINT')?.[1]).toMatch(/tini.*dist\/bin\.js/)
    expect(stage.find(([k]) => k === 'CMD')?.[1]).toBe('["up"]')
    expect(stage.find(([k]) => k === 'WORKDIR')?.[1]).toBe('/work')
  })

  it('pins the same runtime release as the CLI', () => {
    expect(dockerfile).toContain(`io.sallyport.runtime="opencode-ai@${RUNTIME_VERSION}"`)
    expect(readFileSync(join(repo, 'pnpm-workspace.yaml'), 'utf8')).toMatch(
      new RegExp(`opencode-ai: ${RUNTIME_VERSION}`),
    )
  })
})

describe('compose.yaml', () => {
  it('mounts only paths that `sallyport init` creates, with the same kind (file or directory)', () => {
    for (const mount of mounts) {
      expect(mount.host.startsWith(STACK_VAR)).toBe(true)
      const relative = mount.host.slice(STACK_VAR.length)
      const onHost = join(stackDir, relative)
      expect([relative, existsSync(onHost)]).toEqual([relative, true])
      const isFile = statSync(onHost).isFile()
      expect([relative, isFile]).toEqual([relative, relative.endsWith('.json')])
    }
  })

  it('mounts every file with the long syntax and create_host_path: false (a missing file fails loudly)', () => {
    const files = service.volumes.filter((v) =>
      (typeof v === 'string' ? (v.split(':/')[0] ?? '') : v.source).endsWith('.json'),
    )
    expect(files.length).toBe(3)
    for (const volume of files) {
      expect(typeof volume).toBe('object')
      if (typeof volume === 'string') continue
      expect([volume.source, volume.type, volume.bind]).toEqual([
        volume.source,
        'bind',
        { create_host_path: false },
      ])
    }
  })

  it('puts every layer where `up` inside the image looks for it (the spec layer table)', () => {
    const env = envOf(finalStage())
    const inside = stackLayout(env.SALLYPORT_DIR ?? '', {
      managedDir: env.SALLYPORT_MANAGED_DIR,
      policyDir: env.SALLYPORT_POLICY_DIR,
      workspace: env.SALLYPORT_WORKSPACE,
    })
    expect(env.SALLYPORT_MANAGED_DIR).toBe('/etc/opencode')
    expect(inside.workspace).toBe('/work')
    const target = (host: string): Mount | undefined => mounts.find((m) => m.host === `${STACK_VAR}${host}`)
    const expectMount = (host: string, container: string, readOnly: boolean): void => {
      expect(target(host)).toEqual({ host: `${STACK_VAR}${host}`, container, readOnly })
    }
    expectMount('sallyport.json', inside.configFile, true)
    expectMount('state', inside.stateDir, false)
    expectMount('system/assistant', inside.managedDir, true)
    expectMount('system/moderator', inside.moderatorDir, true)
    expectMount('config/opencode/opencode.json', inside.policyFile, true)
    expectMount('config/assistant', inside.userConfigDir, true)
    expectMount('config/assistant/opencode.json', join(inside.userConfigDir, 'opencode.json'), false)
    expectMount('config/akm', inside.akmDir, false)
    // knowledge/ whole (auth.json, tasks, disabled tasks inside), writable by the container user.
    expectMount('knowledge', inside.knowledgeDir, false)
    for (const inner of [inside.authFile, inside.tasksDir, inside.disabledTasksDir])
      expect(inner.startsWith(`${inside.knowledgeDir}/`)).toBe(true)
    expectMount('workspace', inside.workspace, false)
    // The nested writable preferences file is mounted after (over) its read-only directory.
    const dirAt = mounts.findIndex((m) => m.container === inside.userConfigDir)
    const fileAt = mounts.findIndex((m) => m.container === join(inside.userConfigDir, 'opencode.json'))
    expect(fileAt).toBeGreaterThan(dirAt)
  })

  it('passes GATEWAY_ALLOWED_ORIGINS and publishes the gateway on loopback only', () => {
    expect(Object.keys(service.environment)).toContain('GATEWAY_ALLOWED_ORIGINS')
    expect(service.ports).toEqual(['127.0.0.1:8787:8787'])
  })

  it('.dockerignore keeps stacks, state and secrets out of the build context', () => {
    const ignored = readFileSync(join(repo, '.dockerignore'), 'utf8')
    for (const entry of ['stack', '**/state', '**/knowledge', '**/node_modules'])
      expect(ignored.split('\n')).toContain(entry)
  })
})
