import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { RecordedRequest, ScriptEntry } from '@sallyport/testkit'
import type { E2E, McpSession, ToolOutcome } from './harness.js'

/** A hostile workspace: entries that point at secrets, each secret a unique string. */
export interface HostileWorkspace {
  /** Entry (relative to the workspace) → the secret that must never reach the model. */
  readonly secrets: ReadonlyMap<string, string>
  /**
   * Ordinary files whose read would make the runtime load a hostile instruction file beside or
   * above them (AGENTS.md / CONTEXT.md / CLAUDE.md): entry → the secret that must not ride along.
   */
  readonly riders: ReadonlyMap<string, string>
  /** Entries that name directories (listed, globbed, written into). */
  readonly directories: readonly string[]
  /** A benign file and its content: the guard must still let it through. */
  readonly benign: { readonly path: string; readonly text: string }
  /** The absolute workspace root and the directory beside it that plays the stack's state. */
  readonly root: string
  readonly outside: string
}

const secret = (name: string): string => `SECRET-${name}-${randomBytes(9).toString('base64url')}`

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 })
  writeFileSync(path, text, { mode: 0o644 })
}

/**
 * Builds the review's hostile entries in the runtime's workspace: links to the stack's state
 * (an owner key), to the runtime's own environment (its password), to /dev/zero, a directory
 * link out of the workspace, a hard link to a file outside, a FIFO, secret files under upper-case
 * and uncommon names, and `.git/`. Everything is readable by the runtime's user, so only the
 * guard stands between the agent and each secret.
 */
export function buildHostileWorkspace(e2e: E2E): HostileWorkspace {
  const root = e2e.stack.runtime.directory
  const outside = join(e2e.stack.runtime.tempDir, 'outside')
  mkdirSync(outside, { mode: 0o755 })
  chmodSync(outside, 0o755)
  const secrets = new Map<string, string>()
  const ownerKey = secret('owner-key')
  put(join(outside, 'state/credentials/owner/key'), `${ownerKey}\n`)
  const dotEnv = secret('outside-env')
  put(join(outside, '.env'), `TOKEN=${dotEnv}\n`)
  const hard = secret('hard-link')
  put(join(outside, 'hard-target.txt'), `${hard}\n`)

  symlinkSync(join(outside, 'state/credentials/owner/key'), join(root, 'notes.txt'))
  secrets.set('notes.txt', ownerKey)
  const config = secret('outside-config')
  put(join(outside, 'config.yml'), `token: ${config}\n`)
  symlinkSync(outside, join(root, 'rootlink'))
  secrets.set('rootlink/config.yml', config)
  secrets.set('rootlink/.env', dotEnv)
  secrets.set('rootlink/state/credentials/owner/key', ownerKey)
  symlinkSync('../outside/.env', join(root, 'dotenv-link'))
  secrets.set('dotenv-link', dotEnv)
  linkSync(join(outside, 'hard-target.txt'), join(root, 'hard.txt'))
  secrets.set('hard.txt', hard)
  // The runtime's own environment holds the native server password until the guard removes it
  // from the process; /proc keeps the environment the process started with.
  symlinkSync('/proc/self/environ', join(root, 'environ'))
  secrets.set('environ', e2e.stack.runtime.password)
  symlinkSync('/dev/zero', join(root, 'zero'))
  secrets.set('zero', '\u0000\u0000\u0000\u0000')
  execFileSync('mkfifo', [join(root, 'pipe')])
  chmodSync(join(root, 'pipe'), 0o666)
  secrets.set('pipe', 'never-written')
  for (const name of [
    'KEY.PEM',
    'Server.Key',
    '.ENV',
    '.envrc',
    '.htpasswd',
    '.vault-token',
    'terraform.tfstate',
    'id_dsa',
    '.bash_history',
    'server.ppk',
    'apple.p8',
    'database.yml',
    'api-key.txt',
    'kubeconfig',
    '.git/config',
  ]) {
    const value = secret(name.replace(/[^A-Za-z0-9]/gu, ''))
    put(join(root, name), `${value}\n`)
    secrets.set(name, value)
  }
  // The runtime's read tool loads AGENTS.md/CONTEXT.md/CLAUDE.md from the directories between the
  // file and the root by itself (found by the black-box review).
  const riders = new Map<string, string>()
  const rider = (dir: string, name: string, plant: (path: string) => void, leak: string): void => {
    put(join(root, dir, 'deep/c.txt'), 'ordinary\n')
    plant(join(root, dir, name))
    riders.set(`${dir}/deep/c.txt`, leak)
  }
  rider('r1', 'AGENTS.md', (p) => symlinkSync(join(outside, 'state/credentials/owner/key'), p), ownerKey)
  rider('r2', 'CONTEXT.md', (p) => linkSync(join(outside, 'hard-target.txt'), p), hard)
  rider('r3', 'AGENTS.md', (p) => symlinkSync('/proc/self/environ', p), e2e.stack.runtime.password)
  rider('r4', 'AGENTS.md', (p) => symlinkSync('/dev/zero', p), '\u0000\u0000\u0000\u0000')
  rider('r5', 'CONTEXT.md', (p) => execFileSync('mkfifo', [p]), 'never-written')
  const benign = { path: 'ok.txt', text: `benign-${randomBytes(6).toString('hex')}` }
  put(join(root, benign.path), `${benign.text}\n`)
  return { secrets, riders, directories: ['rootlink', '.git', 'rootlink/state'], benign, root, outside }
}

/** What one agent run left: the final job status and every request the model received. */
export interface AgentRun {
  readonly final: ToolOutcome
  readonly requests: RecordedRequest[]
  /** Everything the model was sent after the prompt (tool results, errors), as one string. */
  readonly sentToModel: string
}

/** Runs `steps` as one agent run of `client` and waits until it ends or asks something. */
export async function runScript(
  e2e: E2E,
  client: McpSession,
  steps: ScriptEntry[],
  options: { session?: string; deadlineMs?: number } = {},
): Promise<AgentRun> {
  const marker = e2e.stack.model.script(steps)
  let out = await client.call('gateway.agent.run', {
    message: `work ${marker}`,
    waitMs: 20_000,
    ...(options.session && { session: options.session }),
  })
  const deadline = Date.now() + (options.deadlineMs ?? 40_000)
  while (!out.isError && out.structured.status === 'running' && Date.now() < deadline)
    out = await client.call('gateway.job.get', { job: out.structured.job as string, waitMs: 10_000 })
  const requests = e2e.stack.model.requestsFor(marker)
  return {
    final: out,
    requests,
    sentToModel: JSON.stringify(requests.map((r) => r.body?.messages?.filter((m) => m.role !== 'system'))),
  }
}
