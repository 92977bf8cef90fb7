import { chmod, unlink } from 'node:fs/promises'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { basename, dirname } from 'node:path'
import { SchedulerError } from './errors.ts'
import type { RunRecord } from './history.ts'
import type { SchedulerStatus, SyncReport } from './scheduler.ts'

/** Requests the running scheduler answers on its control socket (`state/scheduler.sock`). */
export type ControlRequest =
  | { readonly op: 'status' }
  | { readonly op: 'sync'; readonly rebind?: boolean }
  | { readonly op: 'run'; readonly id: string }

/** What the running scheduler answers to each request `op`: the contract of both ends. */
export interface ControlResults {
  readonly status: SchedulerStatus
  readonly sync: SyncReport
  readonly run: RunRecord
}

/** The answer to `request`, e.g. `ControlResult<{ op: 'status' }>` is {@link SchedulerStatus}. */
export type ControlResult<R extends ControlRequest> = ControlResults[R['op']]

export type ControlResponse =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly code: string; readonly error: string }

/** Largest request line accepted. */
const MAX_REQUEST_BYTES = 4096
/** Longest Unix socket path (sun_path is 108 bytes on Linux, with its terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107

/**
 * Serves the control socket: one JSON request per connection, one JSON answer. The socket lives
 * in the private `state/` directory and is made 0600; a stale socket of a scheduler that died is
 * replaced, a live one means another scheduler runs for this stack (`ERR_SCHEDULER_EXISTS`).
 */
export async function serveControl(
  path: string,
  handle: (request: ControlRequest) => Promise<unknown>,
): Promise<{ close(): Promise<void> }> {
  if (await isAnswering(path))
    throw new SchedulerError('ERR_SCHEDULER_EXISTS', 'another scheduler runs for this stack')
  await unlink(path).catch(() => {})
  const server: Server = createServer({ allowHalfOpen: false }, (socket) => void answer(socket, handle))
  const previous = process.umask(0o177)
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      viaShortPath(path, (usable) =>
        server.listen(usable, () => {
          server.off('error', reject)
          resolve()
        }),
      )
    })
  } finally {
    process.umask(previous)
  }
  await chmod(path, 0o600)
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        unlink(path).catch(() => {})
      }),
  }
}

async function answer(socket: Socket, handle: (request: ControlRequest) => Promise<unknown>): Promise<void> {
  socket.setTimeout(10_000, () => socket.destroy())
  let buffer = ''
  socket.setEncoding('utf8')
  const line = await new Promise<string | undefined>((resolve) => {
    socket.on('data', (chunk: string) => {
      buffer += chunk
      const end = buffer.indexOf('\n')
      if (end >= 0) {
        // One request per connection: nothing more is read while it is answered.
        socket.pause()
        resolve(buffer.slice(0, end))
      } else if (buffer.length > MAX_REQUEST_BYTES) resolve(undefined)
    })
    socket.on('end', () => resolve(undefined))
    socket.on('error', () => resolve(undefined))
  })
  socket.setTimeout(0)
  const reply = (response: ControlResponse): void => {
    if (!socket.destroyed) socket.end(`${JSON.stringify(response)}\n`)
  }
  const request = parseRequest(line)
  if (!request) return reply({ ok: false, code: 'ERR_SCHEDULER_BAD_REQUEST', error: 'bad request' })
  try {
    reply({ ok: true, result: await handle(request) })
  } catch (error) {
    reply({
      ok: false,
      code: SchedulerError.isInstance(error) ? error.code : 'ERR_SCHEDULER_INTERNAL',
      error: SchedulerError.isInstance(error) ? error.message : 'internal error',
    })
  }
}

function parseRequest(line: string | undefined): ControlRequest | undefined {
  if (line === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  const v = value as Record<string, unknown>
  if (typeof v !== 'object' || v === null) return undefined
  if (v.op === 'status') return { op: 'status' }
  if (v.op === 'sync') return { op: 'sync', rebind: v.rebind === true }
  if (v.op === 'run' && typeof v.id === 'string' && v.id.length <= 128) return { op: 'run', id: v.id }
  return undefined
}

/**
 * Sends one request to the running scheduler and returns its answer as it came: untyped, so any
 * server (a test double too) can be asked; {@link askScheduler} is the typed form. Throws
 * `ERR_SCHEDULER_UNAVAILABLE` when none answers (no socket, refused, or no answer within
 * `timeoutMs`), and a `SchedulerError` with the scheduler's code when it answers with an error.
 */
export async function callScheduler(
  path: string,
  request: ControlRequest,
  timeoutMs = 10_000,
): Promise<unknown> {
  const text = await new Promise<string>((resolve, reject) => {
    let buffer = ''
    const socket = viaShortPath(path, (usable) => connect(usable))
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new SchedulerError('ERR_SCHEDULER_UNAVAILABLE', 'the scheduler did not answer in time'))
    }, timeoutMs)
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`))
    socket.on('data', (chunk: string) => {
      buffer += chunk
    })
    socket.on('end', () => {
      clearTimeout(timer)
      resolve(buffer)
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      reject(
        new SchedulerError(
          'ERR_SCHEDULER_UNAVAILABLE',
          'the scheduler is not running (start the stack with `sallyport up`)',
          { cause: error },
        ),
      )
    })
  })
  let response: ControlResponse
  try {
    response = JSON.parse(text) as ControlResponse
  } catch {
    throw new SchedulerError('ERR_SCHEDULER_UNAVAILABLE', 'the scheduler gave no answer')
  }
  if (response.ok) return response.result
  throw new SchedulerError(
    (response.code.startsWith('ERR_SCHEDULER_')
      ? response.code
      : 'ERR_SCHEDULER_RECONCILE') as SchedulerError['code'],
    response.error,
  )
}

/**
 * {@link callScheduler} with the answer typed by the request's `op` ({@link ControlResults}):
 * `status` gives a `SchedulerStatus`, `sync` a `SyncReport`, `run` a `RunRecord`. Not validated
 * at run time: the scheduler answering runs this same package (`daemonEntryPath`), and
 * `runSchedulerDaemon`'s answers are checked against the same map at compile time.
 */
export function askScheduler<R extends ControlRequest>(
  path: string,
  request: R,
  timeoutMs?: number,
): Promise<ControlResult<R>> {
  return callScheduler(path, request, timeoutMs) as Promise<ControlResult<R>>
}

/**
 * Runs `use` with a path the kernel accepts for a Unix socket. A socket path is limited to 107
 * bytes; a deeper stack directory is reached relative to its own directory: the working
 * directory is switched for the synchronous bind or connect call and switched back at once.
 */
function viaShortPath<T>(path: string, use: (usable: string) => T): T {
  // Not inside the agent runtime (the task tools): its working directory is not ours to switch.
  // There a long path fails to connect, and the change waits for the next sync.
  if (Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES || 'bun' in process.versions) return use(path)
  const previous = process.cwd()
  process.chdir(dirname(path))
  try {
    return use(`./${basename(path)}`)
  } finally {
    process.chdir(previous)
  }
}

async function isAnswering(path: string): Promise<boolean> {
  try {
    await callScheduler(path, { op: 'status' }, 2000)
    return true
  } catch {
    return false
  }
}
