import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { expect } from 'vitest'
import { GuardError, type GuardErrorCode } from '../../src/index.ts'

/** A temp directory with a workspace root inside and a canary file outside it. */
export interface WorkspaceFixture {
  readonly base: string
  readonly root: string
  readonly outside: string
  /** Absolute path of a file outside the root. */
  readonly canaryPath: string
  /** Unique content of every canary: must never come back from the guard. */
  readonly canary: string
  /** Writes a file under the root (parents created). */
  write(relative: string, content: string | Uint8Array): string
  /** Writes a file under the outside directory. */
  writeOutside(relative: string, content: string | Uint8Array): string
  /** Creates a symlink at `relative` (under the root) pointing at `target` as given. */
  link(target: string, relative: string): void
  /** Creates a FIFO under the root. */
  fifo(relative: string): void
  remove(): void
}

export function createWorkspaceFixture(rootSegments: readonly string[] = ['root']): WorkspaceFixture {
  const base = mkdtempSync(join(tmpdir(), 'workspace-guard-test-'))
  const root = join(base, ...rootSegments)
  const outside = join(base, 'outside')
  mkdirSync(root, { recursive: true })
  mkdirSync(outside, { recursive: true })
  const canary = `CANARY-${randomUUID()}`
  const write = (directory: string, relative: string, content: string | Uint8Array): string => {
    const path = join(directory, relative)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
    return path
  }
  const canaryPath = write(outside, 'canary.txt', `${canary}\n`)
  return {
    base,
    root,
    outside,
    canaryPath,
    canary,
    write: (relative, content) => write(root, relative, content),
    writeOutside: (relative, content) => write(outside, relative, content),
    link(target, relative) {
      const path = join(root, relative)
      mkdirSync(dirname(path), { recursive: true })
      symlinkSync(target, path)
    },
    fifo(relative) {
      execFileSync('mkfifo', [join(root, relative)])
    },
    remove: () => rmSync(base, { recursive: true, force: true }),
  }
}

/** Awaits a rejection and returns the GuardError (fails the test for anything else). */
export async function guardError(promise: Promise<unknown>): Promise<GuardError> {
  try {
    await promise
  } catch (error) {
    expect(GuardError.isInstance(error), `expected a GuardError, got ${String(error)}`).toBe(true)
    return error as GuardError
  }
  throw new Error('expected the promise to reject')
}

/** Asserts the code of a rejection. */
export async function expectCode(promise: Promise<unknown>, code: GuardErrorCode): Promise<GuardError> {
  const error = await guardError(promise)
  expect(error.code).toBe(code)
  return error
}
