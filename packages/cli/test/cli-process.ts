import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The built binary the end-to-end tests run. */
export const BIN = join(import.meta.dirname, '..', 'dist', 'bin.js')

export interface CliRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** The environment of a CLI process: the test's own, minus anything that would redirect the stack. */
export function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env, SALLYPORT_DIR: undefined, ...extra }
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value
  return out
}

/** Runs `sallyport <args>` to completion. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string | undefined>; input?: string } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: cliEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.once('error', reject)
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
    child.stdin.end(options.input ?? '')
  })
}

/** A long-running `sallyport` process (up, serve) with its output collected as it arrives. */
export interface LiveCli {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export function startCli(args: string[], env: Record<string, string | undefined> = {}): LiveCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** A fresh temporary directory and its removal. */
export function tempDir(prefix = 'sallyport-cli-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

/** True while a process with this pid exists (the one liveness check, from runtime-process). */
export { isProcessAlive as alive } from '@sallyport/runtime-process'
