import { spawnSync } from 'node:child_process'
import { lstat, readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { resolveOpencodeBinary } from '../runtime/resolve-binary.ts'
import { buildRuntimeBaseEnv } from '../runtime/runtime-env.ts'
import { basicAuth } from '../runtime/wait-ready.ts'
import { overridesFromEnv, relativeToStack, type StackLayout, stackLayout } from '../stack/layout.ts'
import { PREFERENCES_FILES, RUNTIME_VERSION } from '../stack/managed-files.ts'
import { isPortFree } from '../stack/ports.ts'
import { inspectRuntimeGuard } from '../stack/runtime-guard-plugin.ts'
import { loadStackConfig, type StackConfig } from '../stack/stack-config.ts'
import { hostForUrl, readStackEnv } from '../stack/stack-env.ts'
import { secretsInWorkspace } from '../stack/workspace-guard.ts'

/** One finding of `doctor`. */
export interface Check {
  readonly name: string
  readonly status: 'ok' | 'warn' | 'fail'
  readonly detail: string
  /** What to do about a warning or failure. */
  readonly fix?: string
}

export interface DoctorOptions {
  readonly dir: string
  readonly json?: boolean
}

const check = (name: string, status: Check['status'], detail: string, fix?: string): Check => ({
  name,
  status,
  detail,
  ...(fix ? { fix } : {}),
})

/**
 * `agentgate doctor`: checks layout, permissions, configuration, the runtime binary and version,
 * ports and the health of each process, and says what to fix. Throws `ERR_CLI_CHECK_FAILED`
 * (exit 9) when any check fails; warnings alone pass.
 */
export async function doctor(options: DoctorOptions, io: Io): Promise<Check[]> {
  const layout = stackLayout(options.dir, overridesFromEnv(io.env))
  const checks: Check[] = []
  let config: StackConfig | undefined
  try {
    config = await loadStackConfig(layout.configFile)
    checks.push(check('config', 'ok', 'agentgate.json is valid'))
  } catch (error) {
    checks.push(
      check('config', 'fail', (error as Error).message, 'run `agentgate init` or correct agentgate.json'),
    )
  }
  checks.push(...(await layoutChecks(layout)))
  checks.push(...(await modeChecks(layout)))
  checks.push(...(await configDirChecks(layout)))
  checks.push(await preferencesCheck(layout))
  checks.push(await runtimeGuardCheck(layout))
  checks.push(runtimeVersionCheck(layout, config, io))
  if (config) checks.push(...(await processChecks(layout, config)))

  if (options.json) io.out(`${JSON.stringify({ ok: !checks.some((c) => c.status === 'fail'), checks })}\n`)
  else io.out(formatChecks(checks))
  const failed = checks.filter((c) => c.status === 'fail').length
  if (failed > 0)
    throw new CliError(
      'ERR_CLI_CHECK_FAILED',
      `${failed} problem${failed === 1 ? '' : 's'} found (see above)`,
    )
  return checks
}

/** Human-readable report. */
export function formatChecks(checks: readonly Check[]): string {
  const label = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const
  return `${checks
    .map(
      (c) =>
        `${label[c.status]}  ${c.name}: ${c.detail}${c.fix && c.status !== 'ok' ? `\n      fix: ${c.fix}` : ''}`,
    )
    .join('\n')}\n`
}

async function kindOf(path: string): Promise<'file' | 'dir' | 'link' | 'other' | undefined> {
  try {
    const info = await lstat(path)
    if (info.isSymbolicLink()) return 'link'
    if (info.isDirectory()) return 'dir'
    return info.isFile() ? 'file' : 'other'
  } catch {
    return undefined
  }
}

async function layoutChecks(layout: StackLayout): Promise<Check[]> {
  const dirs = [
    layout.stateDir,
    layout.credentialsDir,
    layout.managedDir,
    layout.moderatorDir,
    layout.policyDir,
    layout.userConfigDir,
    layout.akmDir,
    layout.secretsDir,
    layout.tasksDir,
    layout.disabledTasksDir,
    layout.workspace,
  ]
  const files = [
    layout.handleSecret,
    layout.nativePassword,
    layout.moderatorPassword,
    layout.ownerKeyFile,
    join(layout.managedDir, 'opencode.json'),
    join(layout.moderatorDir, 'opencode.json'),
    layout.policyFile,
    layout.akmConfig,
    layout.authFile,
  ]
  const missing: string[] = []
  for (const path of dirs)
    if ((await kindOf(path)) !== 'dir') missing.push(`${relativeToStack(layout, path)}/`)
  for (const path of files) if ((await kindOf(path)) !== 'file') missing.push(relativeToStack(layout, path))
  const out: Check[] = [
    missing.length === 0
      ? check('layout', 'ok', 'every directory and file of the stack is present')
      : check(
          'layout',
          'fail',
          `missing: ${missing.join(', ')}`,
          `run \`agentgate init --dir ${layout.root}\` (it only adds what is missing)`,
        ),
  ]
  if ((await kindOf(layout.userEnvFile)) !== undefined) {
    out.push(
      check('user.env', 'ok', 'knowledge/env/user.env exists; it is never loaded into a runtime environment'),
    )
  }
  return out
}

async function modeChecks(layout: StackLayout): Promise<Check[]> {
  const secretFiles = [
    layout.handleSecret,
    layout.nativePassword,
    layout.moderatorPassword,
    layout.stackEnv,
    layout.authFile,
  ]
  try {
    for (const name of await readdir(layout.credentialsDir, { withFileTypes: true })) {
      if (name.isDirectory()) secretFiles.push(join(layout.credentialsDir, name.name, 'key'))
    }
  } catch {
    // reported by the layout check
  }
  const privateDirs = [layout.stateDir, layout.credentialsDir, layout.knowledgeDir, layout.secretsDir]
  const loose: string[] = []
  for (const path of [...secretFiles, ...privateDirs]) {
    try {
      const info = await lstat(path)
      if ((info.mode & 0o077) !== 0)
        loose.push(`${relativeToStack(layout, path)} (${(info.mode & 0o777).toString(8)})`)
    } catch {
      // absent files are reported by the layout check
    }
  }
  const inWorkspace = await secretsInWorkspace(layout)
  const out: Check[] = [
    loose.length === 0
      ? check('permissions', 'ok', 'secret files are 0600 and state directories 0700')
      : check(
          'permissions',
          'fail',
          `readable by group or others: ${loose.join(', ')}`,
          'chmod 600 those files and chmod 700 those directories',
        ),
  ]
  if (inWorkspace !== undefined) {
    out.push(
      check(
        'secrets outside workspace',
        'fail',
        `${inWorkspace}: state/ or knowledge/secrets/ would be readable through the gateway`,
        'choose a workspace outside state/ and knowledge/secrets/ (AGENTGATE_WORKSPACE); `up` and `serve` refuse to start',
      ),
    )
  }
  return out
}

async function configDirChecks(layout: StackLayout): Promise<Check[]> {
  const out: Check[] = []
  for (const dir of [layout.managedDir, layout.moderatorDir, layout.userConfigDir]) {
    const name = relativeToStack(layout, dir)
    let lock: { packages?: Record<string, { dependencies?: Record<string, string> }> } | undefined
    try {
      lock = JSON.parse(await readFile(join(dir, 'package-lock.json'), 'utf8'))
    } catch {
      lock = undefined
    }
    const seeded = lock?.packages?.['']?.dependencies?.['@opencode-ai/plugin'] !== undefined
    const modules =
      (await kindOf(join(dir, 'node_modules'))) === 'dir'
        ? await readdir(join(dir, 'node_modules'))
        : undefined
    const pkg = await kindOf(join(dir, 'package.json'))
    if (!seeded || modules === undefined) {
      out.push(
        check(
          `config dir ${name}`,
          'fail',
          'not pre-seeded: the runtime would npm-install its plugin SDK here',
          'run `agentgate init` to add the seed files',
        ),
      )
    } else if (modules.length > 0 || pkg) {
      out.push(
        check(
          `config dir ${name}`,
          'warn',
          'package files were bootstrapped here',
          `delete ${name}/node_modules/* and ${name}/package.json`,
        ),
      )
    } else {
      out.push(check(`config dir ${name}`, 'ok', 'pre-seeded; no plugin install at startup'))
    }
  }
  return out
}

async function runtimeGuardCheck(layout: StackLayout): Promise<Check> {
  const state = await inspectRuntimeGuard(layout)
  if (state.ok)
    return check('runtime guard', 'ok', 'the assistant runtime loads the workspace guard for remote agents')
  return state.problem === 'module'
    ? check('runtime guard', 'fail', state.detail, 'reinstall agentgate')
    : check('runtime guard', 'warn', state.detail, '`agentgate up` restores it (or run `agentgate init`)')
}

/** The preferences file compose.yaml mounts writable into the container's read-only user directory. */
const COMPOSE_PREFERENCES_FILE = 'opencode.json'

async function preferencesCheck(layout: StackLayout): Promise<Check> {
  const present: string[] = []
  for (const name of PREFERENCES_FILES)
    if ((await kindOf(join(layout.userConfigDir, name))) === 'file') present.push(name)
  if (present.length === 0) {
    return check('preferences', 'fail', 'no preferences file in config/assistant/', 'run `agentgate init`')
  }
  const inForce = present[0]
  const notMounted =
    inForce === COMPOSE_PREFERENCES_FILE
      ? undefined
      : `compose.yaml mounts config/assistant/${COMPOSE_PREFERENCES_FILE} writable, not ${inForce}: in the container the runtime cannot save preferences${present.includes(COMPOSE_PREFERENCES_FILE) ? '' : ' and the start fails (the mounted file is missing)'}`
  if (present.length > 1) {
    return check(
      'preferences',
      'warn',
      `the runtime uses ${inForce}; ${present.slice(1).join(', ')} ${present.length > 2 ? 'are' : 'is'} shadowed${notMounted ? `; ${notMounted}` : ''}`,
      `merge the files into one${notMounted ? ` named ${COMPOSE_PREFERENCES_FILE}` : ''} and restart the stack`,
    )
  }
  if (notMounted) {
    return check(
      'preferences',
      'warn',
      `the runtime uses config/assistant/${inForce}; ${notMounted}`,
      `rename it to ${COMPOSE_PREFERENCES_FILE} (as JSON) when you run the image, or change that mount in compose.yaml`,
    )
  }
  return check('preferences', 'ok', `config/assistant/${inForce}`)
}

function runtimeVersionCheck(layout: StackLayout, config: StackConfig | undefined, io: Io): Check {
  let binary: string
  try {
    binary = resolveOpencodeBinary(io.env)
  } catch (error) {
    return check('runtime', 'fail', (error as Error).message, 'reinstall @agentgate/cli')
  }
  // The assistant runtime's own environment (its HOME/XDG dirs inside state/, its flags), so the
  // probe writes nothing into the operator's home and sees nothing of the operator's environment.
  const result = spawnSync(binary, ['--version'], {
    encoding: 'utf8',
    timeout: 20_000,
    env: buildRuntimeBaseEnv({
      dirs: layout.assistantState,
      configDir: layout.managedDir,
      managedConfigDir: layout.policyDir,
      timezone: config?.assistant.timezone ?? 'UTC',
      parent: io.env,
    }),
  })
  const version = result.stdout?.trim()
  if (result.status !== 0 || !version)
    return check(
      'runtime',
      'fail',
      'the opencode binary did not report a version',
      'reinstall @agentgate/cli',
    )
  if (version !== RUNTIME_VERSION) {
    return check(
      'runtime',
      'fail',
      `opencode ${version}, expected the pinned ${RUNTIME_VERSION}`,
      'unset AGENTGATE_OPENCODE_BIN or reinstall',
    )
  }
  return check('runtime', 'ok', `opencode ${version} (pinned)`)
}

async function probe(
  url: string,
  authorization?: string,
): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const response = await fetch(url, {
      ...(authorization ? { headers: { authorization } } : {}),
      signal: AbortSignal.timeout(2000),
    })
    return { status: response.status, body: await response.json().catch(() => undefined) }
  } catch {
    return undefined
  }
}

async function processChecks(layout: StackLayout, config: StackConfig): Promise<Check[]> {
  const out: Check[] = []
  const recorded = await readStackEnv(layout)
  const nativePort =
    config.native.port === 'auto' ? Number(recorded.get('AGENTGATE_NATIVE_PORT') ?? 3810) : config.native.port
  const readPassword = async (path: string): Promise<string | undefined> =>
    readFile(path, 'utf8').then(
      (t) => t.trim(),
      () => undefined,
    )
  const nativePassword = await readPassword(layout.nativePassword)
  const moderatorPassword = await readPassword(layout.moderatorPassword)
  const gatewayHost = config.gateway.host === '0.0.0.0' ? '127.0.0.1' : config.gateway.host
  const targets = [
    {
      name: 'gateway',
      host: gatewayHost,
      port: config.gateway.port,
      url: `http://${hostForUrl(gatewayHost)}:${config.gateway.port}/health`,
      auth: undefined,
      healthy: (body: unknown) => (body as { ok?: unknown } | undefined)?.ok === true,
      setting: 'gateway.port',
    },
    {
      name: 'assistant runtime',
      host: config.native.host,
      port: nativePort,
      url: `http://${hostForUrl(config.native.host)}:${nativePort}/global/health`,
      auth: nativePassword ? basicAuth(config.native.username, nativePassword) : undefined,
      healthy: (body: unknown) => (body as { healthy?: unknown } | undefined)?.healthy === true,
      setting: 'native.port',
    },
    ...(config.moderator.enabled
      ? [
          {
            name: 'moderator runtime',
            host: '127.0.0.1',
            port: config.moderator.port,
            url: `http://127.0.0.1:${config.moderator.port}/global/health`,
            auth: moderatorPassword ? basicAuth('moderator', moderatorPassword) : undefined,
            healthy: (body: unknown) => (body as { healthy?: unknown } | undefined)?.healthy === true,
            setting: 'moderator.port',
          },
        ]
      : []),
  ]
  for (const t of targets) {
    const where = `${t.host}:${t.port}`
    const answer = await probe(t.url, t.auth)
    if (answer && answer.status === 200 && t.healthy(answer.body)) {
      const version = (answer.body as { version?: unknown }).version
      out.push(
        check(t.name, 'ok', `healthy on ${where}${typeof version === 'string' ? ` (${version})` : ''}`),
      )
    } else if (answer) {
      out.push(
        check(
          t.name,
          'fail',
          `${where} answers HTTP ${answer.status}, not as this stack's ${t.name}${answer.status === 401 ? ' (wrong password: another stack?)' : ''}`,
          `stop the other server or change ${t.setting} in agentgate.json`,
        ),
      )
    } else if (await isPortFree(t.host, t.port)) {
      out.push(check(t.name, 'warn', `not running (${where} is free)`, 'start the stack with `agentgate up`'))
    } else {
      out.push(
        check(
          t.name,
          'fail',
          `${where} is taken by another process`,
          `stop it or change ${t.setting} in agentgate.json`,
        ),
      )
    }
  }
  return out
}
