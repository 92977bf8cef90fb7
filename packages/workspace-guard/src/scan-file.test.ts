import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import * as safeFile from './safe-file.ts'
import { scanFile } from './scan-file.ts'

vi.mock('./safe-file.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./safe-file.ts')>()
  return {
    ...actual,
    assertReadableFile: vi.fn(actual.assertReadableFile),
    assertReadMatchesStats: vi.fn(actual.assertReadMatchesStats),
  }
})

let root: string
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'scan-file-')))
  mkdirSync(join(root, 'dir'))
  writeFileSync(join(root, 'ok.txt'), 'needle\n')
  writeFileSync(join(root, 'big.txt'), 'needle '.repeat(100))
  writeFileSync(join(root, 'linked.txt'), 'needle\n')
  linkSync(join(root, 'linked.txt'), join(root, 'second-name.txt'))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

const find = (text: string): string[] => (text.includes('needle') ? ['hit'] : [])

describe('scanFile', () => {
  it('uses the same file checks as read (assertReadableFile, assertReadMatchesStats)', async () => {
    vi.mocked(safeFile.assertReadableFile).mockClear()
    vi.mocked(safeFile.assertReadMatchesStats).mockClear()
    expect(await scanFile(root, 'ok.txt', 1000, find)).toEqual(['hit'])
    expect(safeFile.assertReadableFile).toHaveBeenCalledTimes(1)
    expect(safeFile.assertReadMatchesStats).toHaveBeenCalledTimes(1)
  })

  it('turns every refusal of those checks into undefined', async () => {
    expect(await scanFile(root, 'big.txt', 100, find)).toBeUndefined() // over the cap
    expect(await scanFile(root, 'linked.txt', 1000, find)).toBeUndefined() // hard-linked
    expect(await scanFile(root, 'dir', 1000, find)).toBeUndefined() // a directory
  })
})
