import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { onTestFinished } from 'vitest'

/** A fresh state directory, removed when the current test finishes. */
export async function tempStateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sallyport-credentials-'))
  onTestFinished(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  return join(dir, 'state')
}

/** A deterministic random source: SHA-256 in counter mode over `seed`. */
export function seededRandom(seed = 'seed'): (size: number) => Uint8Array {
  let counter = 0
  return (size) => {
    const out = Buffer.alloc(size)
    for (let offset = 0; offset < size; offset += 32) {
      createHash('sha256').update(`${seed}:${counter++}`).digest().copy(out, offset)
    }
    return out
  }
}

/**
 * Polls `probe` until it returns true or `timeoutMs` passes; returns the elapsed milliseconds.
 * Throws on timeout, so the calling test fails with a clear message.
 */
export async function pollUntil(
  probe: () => Promise<boolean> | boolean,
  {
    timeoutMs,
    intervalMs = 20,
    what = 'condition',
  }: { timeoutMs: number; intervalMs?: number; what?: string },
): Promise<number> {
  const start = Date.now()
  for (;;) {
    if (await probe()) return Date.now() - start
    if (Date.now() - start > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`)
    await sleep(intervalMs)
  }
}

/** Runs `fn` and returns the `code` of what it threw, or fails if it did not throw. */
export async function codeOf(fn: () => unknown): Promise<string> {
  try {
    await fn()
  } catch (error) {
    return (error as { code?: string }).code ?? `no code: ${String(error)}`
  }
  throw new Error('expected a rejection')
}
