import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import {
  bundledPluginPath,
  PLUGIN_WRAPPER_FILE,
  pluginWrapperSource,
  RUNTIME_GUARD_MODULE_ENV,
} from '@sallyport/runtime-guard'
import {
  basicAuth,
  killProcessGroupsOnSignals,
  launchRuntime,
  RuntimeProcessError,
  resolveOpencodeBinary,
  type SupervisedProcess,
  waitForListening,
  waitUntilHealthy,
} from '@sallyport/runtime-process'
import { assertReachable } from './check-access.ts'
import { TestkitError } from './errors.ts'
import { freePort } from './free-port.ts'
import { buildRuntimeConfig, type JsonObject } from './runtime-config.ts'
import { createSandbox, type ProcessUser, removeSandbox, type Sandbox, sandboxEnvInput } from './sandbox.ts'
import { stageBinaryFor } from './stage-binary.ts'

/** Output lines kept per runtime (for `logs()` and error messages). */
const KEPT_LINES = 2000
/** Lines of output an error message ends with. */
const LOG_TAIL_LINES = 40

/** Options of {@link startRuntime}. */
export interface RuntimeOptions {
  /** Provider base URL of the scripted model (`ModelServer.baseURL`); default an unreachable URL. */
  modelURL?: string
  /** Deep-merged over the generated `opencode.json` (provider, agent profiles). */
  config?: JsonObject
  /** A writable user preferences file in the otherwise read-only global config dir (see `SandboxOptions`). */
  preferences?: { readonly name: 'opencode.json' | 'opencode.jsonc'; readonly text: string }
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
  /** Path of the opencode binary; default the pinned one (`OPENCODE_BIN` overrides it). */
  binary?: string
  /**
   * Install the runtime guard plugin (`@sallyport/runtime-guard`) in the config dir, as the
   * stack does; default true. Only a test that proves what happens WITHOUT it turns it off.
   */
  runtimeGuard?: boolean
  /**
   * Start in this existing sandbox (the `sandbox` of an earlier runtime that died) instead of a new
   * one: the same data directory, configuration and workspace, so a test can restart a killed
   * runtime (pass its `port`, `username` and `password` too). The sandbox stays the earlier
   * handle's: this runtime's `stop()` never removes it. `config`, `preferences`, `workspace`,
   * `gitInit`, `tempParent` and `runtimeGuard` are then ignored (the sandbox has them already).
   */
  sandbox?: Sandbox
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
  /** The kept runtime output (last 2000 lines, stdout and stderr tagged `[out]`/`[err]`). */
  logs(): string
  /** `fetch` relative to `url` with the Basic auth header set. */
  fetch(path: string, init?: RequestInit): Promise<Response>
  /** SIGTERM, SIGKILL after the grace period, wait for exit, remove the temp dir unless `keep`. Idempotent. */
  stop(): Promise<void>
}

/**
 * Launches the real `opencode serve` in a fresh sandbox and resolves once it is healthy. The
 * process is started, watched and stopped by `@sallyport/runtime-process`, the code `sallyport up`
 * starts its runtimes with (environment, flags, process group, readiness).
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
    binary = options.binary ?? resolveOpencodeBinary({ env: process.env, overrideVariable: 'OPENCODE_BIN' })
  } catch (cause) {
    throw new TestkitError('ERR_TESTKIT_BINARY_NOT_FOUND', `testkit: ${(cause as Error).message}`, { cause })
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
  const authHeader = basicAuth(username, password)
  const reused = options.sandbox
  const sandbox =
    reused ??
    createSandbox({
      config: buildRuntimeConfig(options.modelURL ?? 'http://127.0.0.1:9/v1', options.config),
      ...(options.tempParent ? { parent: options.tempParent } : {}),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(user ? { user } : {}),
      gitInit: options.gitInit ?? false,
      ...(options.preferences ? { preferences: options.preferences } : {}),
      ...(options.runtimeGuard !== false && {
        plugins: { [PLUGIN_WRAPPER_FILE]: pluginWrapperSource() },
      }),
    })
  const guardEnv = options.runtimeGuard !== false ? { [RUNTIME_GUARD_MODULE_ENV]: bundledPluginPath() } : {}
  const environment = sandboxEnvInput(sandbox, { username, password, extra: { ...guardEnv, ...options.env } })
  const echo = options.echoLogs ?? process.env.TESTKIT_RUNTIME_LOGS === '1'
  const cleanup = (): void => {
    // A reused sandbox belongs to the handle that created it.
    if (!options.keep && !reused) removeSandbox(sandbox)
  }
  // A killed test worker still leaves no runtime and no sandbox behind.
  killProcessGroupsOnSignals()

  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort())
    const started = performance.now()
    const child = launchRuntime({
      ...environment,
      name: 'opencode',
      binary,
      host: '127.0.0.1',
      port,
      cwd: sandbox.workspace,
      logLevel: options.logLevel ?? 'WARN',
      user,
      keepLines: KEPT_LINES,
      onAbandon: cleanup,
    })
    if (echo) child.onLine((line, stream) => console.error(`[runtime ${tag(stream)}] ${line}`))
    try {
      const deadline = Date.now() + startTimeoutMs
      const url = await waitForListening(child, deadline)
      const listeningMs = performance.now() - started
      await waitUntilHealthy({ child, url, authorization: authHeader, deadline, intervalMs: 50 })
      const startupMs = performance.now() - started
      return makeHandle({
        child,
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
      await child.stop(0)
      const portTaken = /ServeError|EADDRINUSE|address already in use/i.test(logText(child))
      const failure = asTestkitError(error, child)
      if (options.port === undefined && portTaken && attempt < 3 && TestkitError.isInstance(failure)) continue
      cleanup()
      throw failure
    }
  }
}

function resolveUser(choice: 'auto' | 'current' | ProcessUser): ProcessUser | undefined {
  if (typeof choice === 'object') return choice
  if (choice === 'current') return undefined
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined
}

const tag = (stream: 'stdout' | 'stderr'): 'out' | 'err' => (stream === 'stdout' ? 'out' : 'err')

/** The kept output, each line tagged `[out]` or `[err]`. */
function logText(child: SupervisedProcess, count?: number): string {
  return child
    .output(count)
    .map((line) => `[${tag(line.stream)}] ${line.text}`)
    .join('\n')
}

/** A runtime that exited or was not ready in time, as a `TestkitError` ending with the log tail. */
function asTestkitError(error: unknown, child: SupervisedProcess): unknown {
  if (!RuntimeProcessError.isInstance(error)) return error
  const code =
    error.code === 'ERR_RUNTIME_PROCESS_EXITED' ? 'ERR_TESTKIT_RUNTIME_EXITED' : 'ERR_TESTKIT_RUNTIME_TIMEOUT'
  return new TestkitError(code, `${error.message}. Last output:\n${logText(child, LOG_TAIL_LINES)}`, {
    cause: error,
  })
}

interface HandleParts {
  child: SupervisedProcess
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
  const { child, url, authHeader, sandbox } = parts
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
    pid: child.pid,
    user: parts.user,
    listeningMs: Math.round(parts.listeningMs),
    startupMs: Math.round(parts.startupMs),
    get exited() {
      return child.exited
    },
    exitCode: child.exit.then((result) => result.code),
    logs: () => logText(child),
    fetch(path, init = {}) {
      const headers = new Headers(init.headers)
      headers.set('authorization', authHeader)
      return fetch(new URL(path, url), { ...init, headers })
    },
    stop() {
      stopping ??= child.stop(parts.stopGraceMs).then(parts.cleanup)
      return stopping
    },
  }
}
