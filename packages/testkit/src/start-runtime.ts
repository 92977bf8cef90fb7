import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import {
  bundledPluginPath,
  PLUGIN_WRAPPER_FILE,
  pluginWrapperSource,
  RUNTIME_GUARD_MODULE_ENV,
} from '@agentgate/runtime-guard'
import { assertReachable } from './check-access.ts'
import { TestkitError } from './errors.ts'
import { type ExitWatch, terminate, watchExit } from './exit-watch.ts'
import { freePort } from './free-port.ts'
import { createLogBuffer, type LogBuffer } from './log-buffer.ts'
import { trackProcessGroup } from './process-cleanup.ts'
import { resolveOpencodeBinary } from './resolve-binary.ts'
import { buildRuntimeConfig, type JsonObject } from './runtime-config.ts'
import { buildRuntimeEnv } from './runtime-env.ts'
import { createSandbox, type ProcessUser, removeSandbox, type Sandbox } from './sandbox.ts'
import { stageBinaryFor } from './stage-binary.ts'
import { waitForHealthy, waitForListening } from './wait-for-runtime.ts'

/** Options of {@link startRuntime}. */
export interface RuntimeOptions {
  /** Provider base URL of the scripted model (`ModelServer.baseURL`); default an unreachable URL. */
  modelURL?: string
  /** Deep-merged over the generated `opencode.json` (provider, agent profiles). */
  config?: JsonObject
  /** Extra environment for the runtime, applied last; `undefined` removes a variable. */
  env?: Record<string, string | undefined>
  /** Port to listen on; default a free port (retried if it was taken meanwhile). */
  port?: number
  /** Existing workspace directory (the runtime's cwd / project). Default `<tempDir>/workspace`. When
   * the runtime drops privileges the directory tree is chowned to that user. */
  workspace?: string
  /** `git init` the workspace before starting; default false (projectID `global`). */
  gitInit?: boolean
  /** Parent directory of the temp dir; default `os.tmpdir()`. */
  tempParent?: string
  /**
   * Who the runtime runs as. `auto` (default): `nobody` (65534:65534) when the tests run as root,
   * else the current user. The runtime user must not be able to write the config dirs: that is
   * what prevents opencode's background npm install. `current` as root loses that guarantee.
   */
  user?: 'auto' | 'current' | ProcessUser
  /** Basic auth user name; default `gateway`. The password is random unless given. */
  username?: string
  password?: string
  /** `--log-level`; default `WARN` (the listening line is printed at every level). */
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'
  /** Deadline for listening + healthy; default 45 000 ms (a loaded 2-vCPU machine took 12 s). */
  startTimeoutMs?: number
  /** Time between SIGTERM and SIGKILL in `stop()`; default 3000 ms. */
  stopGraceMs?: number
  /** Keep the temp dir after `stop()` (for debugging). */
  keep?: boolean
  /** Echo runtime output to stderr; default when `TESTKIT_RUNTIME_LOGS=1`. */
  echoLogs?: boolean
  /** Path of the opencode binary; default {@link resolveOpencodeBinary}. */
  binary?: string
  /**
   * Install the runtime guard plugin (`@agentgate/runtime-guard`) in the config dir, as the
   * stack does; default true. Only a test that proves what happens WITHOUT it turns it off.
   */
  runtimeGuard?: boolean
}

/** A running opencode server. See {@link startRuntime}. */
export interface RuntimeHandle {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly username: string
  readonly password: string
  /** `Basic …` value for the `authorization` header. */
  readonly authHeader: string
  /** The workspace directory (the runtime's cwd and project directory). */
  readonly directory: string
  /** Temp dir holding HOME, XDG dirs, TMPDIR, the config dir and (by default) the workspace. */
  readonly tempDir: string
  /** OPENCODE_CONFIG_DIR (contains the generated `opencode.json`). */
  readonly configDir: string
  /** All directories of the sandbox. */
  readonly sandbox: Sandbox
  /** Process id (also the process group id). */
  readonly pid: number
  /** The user the runtime runs as, or undefined for the current user. */
  readonly user: ProcessUser | undefined
  /** Milliseconds from spawn to the "listening" line. */
  readonly listeningMs: number
  /** Milliseconds from spawn to the first healthy `/global/health`. */
  readonly startupMs: number
  /** Whether the process has exited. */
  readonly exited: boolean
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  readonly exitCode: Promise<number | null>
  /** The kept runtime output (last 2000 lines, stdout and stderr tagged). */
  logs(): string
  /** `fetch` relative to `url` with the Basic auth header set. */
  fetch(path: string, init?: RequestInit): Promise<Response>
  /** SIGTERM, SIGKILL after the grace period, wait for exit, remove the temp dir unless `keep`. Idempotent. */
  stop(): Promise<void>
}

/**
 * Launches the real `opencode serve` in a fresh sandbox and resolves once it is healthy.
 *
 * Throws `TestkitError`: `ERR_TESTKIT_BINARY_NOT_FOUND`, `ERR_TESTKIT_RUNTIME_EXITED` (with the log
 * tail), `ERR_TESTKIT_RUNTIME_TIMEOUT`. `RangeError` for invalid options.
 *
 * @example
 * const model = await startModelServer()
 * const runtime = await startRuntime({ modelURL: model.baseURL })
 * const res = await runtime.fetch('/session', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
 * await runtime.stop()
 */
export async function startRuntime(options: RuntimeOptions = {}): Promise<RuntimeHandle> {
  const startTimeoutMs = options.startTimeoutMs ?? 45_000
  const stopGraceMs = options.stopGraceMs ?? 3_000
  if (!(startTimeoutMs > 0)) throw new RangeError('startTimeoutMs must be > 0')
  if (!(stopGraceMs >= 0)) throw new RangeError('stopGraceMs must be >= 0')
  let binary: string
  try {
    binary = options.binary ?? resolveOpencodeBinary()
  } catch (cause) {
    throw new TestkitError('ERR_TESTKIT_BINARY_NOT_FOUND', (cause as Error).message, { cause })
  }
  const user = resolveUser(options.user ?? 'auto')
  if (user) {
    const tempParent = options.tempParent ?? tmpdir()
    assertReachable(tempParent, user, 'temp parent dir')
    if (options.workspace) assertReachable(options.workspace, user, 'workspace')
    if (options.runtimeGuard !== false) assertReachable(bundledPluginPath(), user, 'runtime guard plugin')
    binary = stageBinaryFor(binary, user, tempParent)
  }
  const username = options.username ?? 'gateway'
  const password = options.password ?? randomBytes(18).toString('base64url')
  const authHeader = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
  const sandbox = createSandbox({
    config: buildRuntimeConfig(options.modelURL ?? 'http://127.0.0.1:9/v1', options.config),
    ...(options.tempParent ? { parent: options.tempParent } : {}),
    ...(options.workspace ? { workspace: options.workspace } : {}),
    ...(user ? { user } : {}),
    gitInit: options.gitInit ?? false,
    ...(options.runtimeGuard !== false && {
      plugins: { [PLUGIN_WRAPPER_FILE]: pluginWrapperSource() },
    }),
  })
  const guardEnv = options.runtimeGuard !== false ? { [RUNTIME_GUARD_MODULE_ENV]: bundledPluginPath() } : {}
  const env = buildRuntimeEnv({ sandbox, username, password, extra: { ...guardEnv, ...options.env } })
  const echo = options.echoLogs ?? process.env.TESTKIT_RUNTIME_LOGS === '1'
  const cleanup = (): void => {
    if (!options.keep) removeSandbox(sandbox)
  }

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort())
    const logs = createLogBuffer(2000, echo ? (line) => console.error(line) : undefined)
    const args = ['serve', '--hostname', '127.0.0.1', '--port', String(port), '--print-logs']
    args.push('--log-level', options.logLevel ?? 'WARN')
    const started = performance.now()
    // detached: own process group, so stop() can signal the runtime and its children, and nothing else.
    const child = spawn(binary, args, {
      cwd: sandbox.workspace,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(user ?? {}),
    })
    const exit = watchExit(child)
    child.stdout?.on('data', (chunk: Buffer) => logs.push('out', chunk))
    child.stderr?.on('data', (chunk: Buffer) => logs.push('err', chunk))
    if (child.pid !== undefined) trackProcessGroup(child.pid, cleanup)
    try {
      const deadline = Date.now() + startTimeoutMs
      const url = await waitForListening({ logs, exit, deadline })
      const listeningMs = performance.now() - started
      await waitForHealthy({ url, authHeader, exit, deadline, logs })
      const startupMs = performance.now() - started
      return makeHandle({
        child,
        exit,
        logs,
        url,
        username,
        password,
        authHeader,
        sandbox,
        user,
        listeningMs,
        startupMs,
        stopGraceMs,
        cleanup,
      })
    } catch (error) {
      await terminate(child, exit, 0)
      const portTaken = /ServeError|EADDRINUSE|address already in use/i.test(logs.text())
      if (options.port === undefined && portTaken && attempt < 3 && TestkitError.isInstance(error)) continue
      cleanup()
      throw error
    }
  }
}

function resolveUser(choice: 'auto' | 'current' | ProcessUser): ProcessUser | undefined {
  if (typeof choice === 'object') return choice
  if (choice === 'current') return undefined
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined
}

interface HandleParts {
  child: ChildProcess
  exit: ExitWatch
  logs: LogBuffer
  url: string
  username: string
  password: string
  authHeader: string
  sandbox: Sandbox
  user: ProcessUser | undefined
  listeningMs: number
  startupMs: number
  stopGraceMs: number
  cleanup: () => void
}

function makeHandle(parts: HandleParts): RuntimeHandle {
  const { child, exit, logs, url, authHeader, sandbox } = parts
  let stopping: Promise<void> | undefined
  return {
    url,
    username: parts.username,
    password: parts.password,
    authHeader,
    directory: sandbox.workspace,
    tempDir: sandbox.tempDir,
    configDir: sandbox.configDir,
    sandbox,
    pid: child.pid!,
    user: parts.user,
    listeningMs: Math.round(parts.listeningMs),
    startupMs: Math.round(parts.startupMs),
    get exited() {
      return exit.exited
    },
    exitCode: exit.promise.then((result) => result.code),
    logs: () => logs.text(),
    fetch(path, init = {}) {
      const headers = new Headers(init.headers)
      headers.set('authorization', authHeader)
      return fetch(new URL(path, url), { ...init, headers })
    },
    stop() {
      stopping ??= terminate(child, exit, parts.stopGraceMs).then(parts.cleanup)
      return stopping
    },
  }
}
