import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readBounded } from './safe-file.ts'

const directory = mkdtempSync(join(tmpdir(), 'workspace-guard-safe-file-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describe('readBounded', () => {
  it('reads no more than the limit from a file much larger than it', async () => {
    const path = join(directory, 'large.bin')
    writeFileSync(path, Buffer.alloc(4 * 1024 * 1024, 0x61))
    const handle = await open(path, 'r')
    let requested = 0
    const read = handle.read.bind(handle)
    // Count what is asked of the descriptor, not only what comes back.
    handle.read = ((buffer: Buffer, offset: number, length: number, position: number) => {
      requested += length
      return read(buffer, offset, length, position)
    }) as typeof handle.read
    try {
      const bytes = await readBounded(handle, 1001)
      expect(bytes).toHaveLength(1001)
      expect(requested).toBe(1001)
    } finally {
      await handle.close()
    }
  })

  it('returns a short file whole', async () => {
    const path = join(directory, 'short.txt')
    writeFileSync(path, 'hello')
    const handle = await open(path, 'r')
    try {
      expect((await readBounded(handle, 100)).toString()).toBe('hello')
    } finally {
      await handle.close()
    }
  })

  it('stops at the limit on a sparse 64 GiB file without touching the rest', async () => {
    const path = join(directory, 'sparse.bin')
    const fd = openSync(path, 'w')
    ftruncateSync(fd, 64 * 1024 ** 3)
    closeSync(fd)
    const handle = await open(path, 'r')
    try {
      const started = performance.now()
      expect(await readBounded(handle, 256 * 1024 + 1)).toHaveLength(256 * 1024 + 1)
      expect(performance.now() - started).toBeLessThan(2000)
    } finally {
      await handle.close()
    }
  })
})
