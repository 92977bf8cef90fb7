import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterEach } from 'vitest'
import { defaultEngineConfig, type EngineConfig } from '../src/engine-config.ts'
import { SchedulerError, type SchedulerErrorCode } from '../src/errors.ts'
import { type SchedulerPaths, schedulerPaths } from '../src/paths.ts'
import type { SchedulerClock } from '../src/scheduler.ts'

/**
 * Returns a factory of temporary directories (fs.mkdtempSync under os.tmpdir()); every directory
 * it made is removed after each test. Call once at the top of a test file.
 */
export function useTempDirs(prefix = 'sp-sched-'): () => string {
  const made: string[] = []
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix))
    made.push(dir)
    return dir
  }
}

/** `sallyport.json` of a test stack: UTC (it holds only `assistant.timezone` for the scheduler). */
export const DEFAULT_STACK_CONFIG = { version: 1, assistant: { timezone: 'UTC' } }

/** `config/akm/config.json` of a test stack: the default engine config with `scheduler.enabled`. */
export function engineConfigWith(enabled: readonly string[] = []): EngineConfig {
  return { ...defaultEngineConfig(), scheduler: { enabled: [...enabled] } }
}

export interface StackOptions {
  /** `scheduler.enabled` of config/akm/config.json (default: none). */
  readonly enabled?: readonly string[]
  /** The whole config/akm/config.json instead (wins over `enabled`). */
  readonly engineConfig?: unknown
  /** The whole sallyport.json (default {@link DEFAULT_STACK_CONFIG}). */
  readonly stackConfig?: unknown
}

/** A stack directory with config/akm/config.json, knowledge/tasks, state/ and sallyport.json. */
export function makeStack(root: string, options: StackOptions = {}): SchedulerPaths {
  const paths = schedulerPaths(root)
  mkdirSync(paths.akmDir, { recursive: true, mode: 0o700 })
  mkdirSync(paths.tasksDir, { recursive: true, mode: 0o700 })
  mkdirSync(paths.stateDir, { recursive: true, mode: 0o700 })
  writeStackConfig(paths, options.stackConfig ?? DEFAULT_STACK_CONFIG)
  writeHostConfig(paths, options.engineConfig ?? engineConfigWith(options.enabled))
  return paths
}

/** Writes `sallyport.json` (`assistant.timezone`). */
export function writeStackConfig(paths: Pick<SchedulerPaths, 'stackConfig'>, value: unknown): void {
  writeFileSync(paths.stackConfig, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 })
}

/** Writes the host-local activation file `config/akm/config.json` (`scheduler.enabled`). */
export function writeHostConfig(paths: Pick<SchedulerPaths, 'engineConfig'>, value: unknown): void {
  writeFileSync(paths.engineConfig, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 })
}

/** Sets `scheduler.enabled` of `config/akm/config.json` (the rest as written by {@link engineConfigWith}). */
export function writeEnabled(paths: Pick<SchedulerPaths, 'engineConfig'>, enabled: readonly string[]): void {
  writeHostConfig(paths, engineConfigWith(enabled))
}

/** `config/akm/config.json` as parsed JSON. */
export function readHostConfig(paths: Pick<SchedulerPaths, 'engineConfig'>): Record<string, unknown> {
  return JSON.parse(readFileSync(paths.engineConfig, 'utf8')) as Record<string, unknown>
}

/** `scheduler.enabled` of `config/akm/config.json`. */
export function enabledIds(paths: Pick<SchedulerPaths, 'engineConfig'>): unknown {
  return (readHostConfig(paths).scheduler as { enabled?: unknown } | undefined)?.enabled
}

/** Writes `knowledge/tasks/<id>.yml` with a minimal valid source plus `extra` lines. */
export function writeTask(
  paths: Pick<SchedulerPaths, 'tasksDir'>,
  id: string,
  extra = '',
  prompt = 'Summarise the notes.',
): string {
  const path = join(paths.tasksDir, `${id}.yml`)
  writeFileSync(path, `version: 1\n${extra}prompt: ${JSON.stringify(prompt)}\n`, { mode: 0o600 })
  return path
}

/** Every regular file under `dir` (relative path → content); directories themselves are not listed. */
export function fileTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (current: string): void => {
    let names: string[]
    try {
      names = readdirSync(current)
    } catch {
      return
    }
    for (const name of names.sort()) {
      const path = join(current, name)
      if (statSync(path).isDirectory()) walk(path)
      else out[relative(dir, path)] = readFileSync(path, 'utf8')
    }
  }
  walk(dir)
  return out
}

/** Awaits `promise` and returns the SchedulerError it rejects with (fails when it resolves or throws something else). */
export async function schedulerErrorOf(promise: Promise<unknown>): Promise<SchedulerError> {
  try {
    await promise
  } catch (error) {
    if (SchedulerError.isInstance(error)) return error
    throw new Error(`expected a SchedulerError, got ${String(error)}`)
  }
  throw new Error('expected a SchedulerError, but the promise resolved')
}

/** Calls `fn` and returns the code of the SchedulerError it throws. */
export function codeThrown(fn: () => unknown): SchedulerErrorCode | undefined {
  try {
    fn()
  } catch (error) {
    if (SchedulerError.isInstance(error)) return error.code
    throw error
  }
  return undefined
}

/** Polls `probe` (every macrotask turn) until true; throws after `timeoutMs` of real time. */
export async function pollUntil(probe: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

/** A promise with its resolve function outside. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

interface FakeTimer {
  readonly at: number
  readonly callback: () => void
}

/**
 * A manual {@link SchedulerClock}: time moves only when a test says so, and timers run only in
 * {@link FakeClock.advanceTo} / {@link FakeClock.fireDue}.
 */
export class FakeClock implements SchedulerClock {
  private readonly timers = new Map<number, FakeTimer>()
  private seq = 0

  constructor(public current: number) {}

  now = (): number => this.current

  setTimer = (callback: () => void, ms: number): unknown => {
    const id = ++this.seq
    this.timers.set(id, { at: this.current + Math.max(0, ms), callback })
    return id
  }

  clearTimer = (handle: unknown): void => {
    this.timers.delete(handle as number)
  }

  get pending(): number {
    return this.timers.size
  }

  /**
   * Steps the wall clock by `ms` (negative: back) the way an NTP correction or a manual change
   * does: `now()` jumps, but pending timers keep their remaining delay (timers are monotonic).
   */
  stepWallClock(ms: number): void {
    this.current += ms
    for (const [id, timer] of this.timers) this.timers.set(id, { ...timer, at: timer.at + ms })
  }

  /** Moves the time without running any timer (a suspended host, a blocked event loop). */
  jump(ms: number): void {
    this.current += ms
  }

  /** Runs the timers that are due now, earliest first. Returns how many ran. */
  fireDue(): number {
    let ran = 0
    for (;;) {
      const next = this.earliest(this.current)
      if (!next) return ran
      this.timers.delete(next[0])
      next[1].callback()
      ran++
    }
  }

  /**
   * Advances to `target`, running each timer at its due time. Before each step it lets pending
   * promise chains settle (one macrotask turn, as between two real timers) and waits (real time,
   * bounded) until the scheduler has armed a timer.
   */
  async advanceTo(target: number): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      await pollUntil(() => this.pending > 0, 'the scheduler to arm its timer')
      const next = this.earliest(target)
      if (!next) break
      this.current = Math.max(this.current, next[1].at)
      this.timers.delete(next[0])
      next[1].callback()
    }
    this.current = Math.max(this.current, target)
  }

  private earliest(limit: number): [number, FakeTimer] | undefined {
    let best: [number, FakeTimer] | undefined
    for (const entry of this.timers)
      if (entry[1].at <= limit && (!best || entry[1].at < best[1].at)) best = entry
    return best
  }
}
