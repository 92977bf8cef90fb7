import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stageBinaryFor } from './stage-binary.ts'

const root = mkdtempSync(join(tmpdir(), 'testkit-stage-'))
chmodSync(root, 0o755)
afterAll(() => rmSync(root, { recursive: true, force: true }))
const nobody = { uid: 65534, gid: 65534 }
const isRoot = process.getuid?.() === 0

/** A binary behind a closed directory; `bytes` differ per test so each gets its own cache name. */
function closedBinary(name: string, bytes: string): { binary: string; cacheDir: string } {
  const closed = join(root, name)
  mkdirSync(closed, { mode: 0o700 })
  const binary = join(closed, 'opencode')
  writeFileSync(binary, bytes, { mode: 0o700 })
  const source = statSync(binary)
  return { binary, cacheDir: join(root, `sallyport-opencode-${source.size}-${Math.floor(source.mtimeMs)}`) }
}

/** Pre-creates the cache dir as an attacker would: a same-size file that is not the binary. */
function plant(cacheDir: string, bytes: string): string {
  mkdirSync(cacheDir, { recursive: true })
  const planted = join(cacheDir, 'opencode')
  writeFileSync(planted, 'x'.repeat(bytes.length), { mode: 0o755 })
  return planted
}

function expectFreshStage(staged: string, cacheDir: string, bytes: string): void {
  expect(dirname(staged)).not.toBe(cacheDir)
  expect(dirname(staged).startsWith(`${cacheDir}-`)).toBe(true)
  expect(readFileSync(staged, 'utf8')).toBe(bytes)
  const dir = lstatSync(dirname(staged))
  expect([dir.uid, dir.mode & 0o777]).toEqual([process.getuid?.(), 0o755])
}

describe('stageBinaryFor', () => {
  it('returns a reachable binary unchanged', () => {
    const open = join(root, 'open')
    mkdirSync(open, { mode: 0o755 })
    writeFileSync(join(open, 'opencode'), 'bin', { mode: 0o755 })
    expect(stageBinaryFor(join(open, 'opencode'), nobody, root)).toBe(join(open, 'opencode'))
  })

  it('stages a binary behind a closed directory once, as a world-executable file', () => {
    const closed = join(root, 'closed')
    mkdirSync(closed, { mode: 0o700 })
    writeFileSync(join(closed, 'opencode'), 'binary bytes', { mode: 0o700 })
    const staged = stageBinaryFor(join(closed, 'opencode'), nobody, root)
    expect(staged.startsWith(join(root, 'sallyport-opencode-'))).toBe(true)
    expect(readFileSync(staged, 'utf8')).toBe('binary bytes')
    expect(statSync(staged).mode & 0o777).toBe(0o755)
    expect(statSync(join(closed, 'opencode')).mode & 0o777).toBe(0o700)
    expect(stageBinaryFor(join(closed, 'opencode'), nobody, root)).toBe(staged)
  })

  it('stages into a fresh directory when the cache dir is writable by others (0777)', () => {
    const bytes = 'binary bytes, world-writable cache'
    const { binary, cacheDir } = closedBinary('closed-0777', bytes)
    const planted = plant(cacheDir, bytes)
    chmodSync(cacheDir, 0o777)
    const staged = stageBinaryFor(binary, nobody, root)
    expectFreshStage(staged, cacheDir, bytes)
    expect(readFileSync(planted, 'utf8')).toBe('x'.repeat(bytes.length))
  })

  it('stages into a fresh directory when the cache path is a symlink', () => {
    const bytes = 'binary bytes, symlinked cache'
    const { binary, cacheDir } = closedBinary('closed-symlink', bytes)
    const elsewhere = join(root, 'elsewhere')
    plant(elsewhere, bytes)
    chmodSync(elsewhere, 0o755)
    symlinkSync(elsewhere, cacheDir)
    expectFreshStage(stageBinaryFor(binary, nobody, root), cacheDir, bytes)
  })

  it('replaces a cached file that others may write, inside its own cache dir', () => {
    const bytes = 'binary bytes, writable cached file'
    const { binary, cacheDir } = closedBinary('closed-file-0666', bytes)
    const planted = plant(cacheDir, bytes)
    chmodSync(cacheDir, 0o755)
    chmodSync(planted, 0o777)
    const staged = stageBinaryFor(binary, nobody, root)
    expect(staged).toBe(planted)
    expect(readFileSync(staged, 'utf8')).toBe(bytes)
    expect(statSync(staged).mode & 0o777).toBe(0o755)
  })

  it.skipIf(!isRoot)(
    'stages into a fresh directory when another user owns the cache dir (needs root)',
    () => {
      const bytes = 'binary bytes, foreign cache'
      const { binary, cacheDir } = closedBinary('closed-foreign', bytes)
      const planted = plant(cacheDir, bytes)
      chmodSync(cacheDir, 0o755)
      chownSync(cacheDir, nobody.uid, nobody.gid)
      chownSync(planted, nobody.uid, nobody.gid)
      expectFreshStage(stageBinaryFor(binary, nobody, root), cacheDir, bytes)
    },
  )

  it.skipIf(!isRoot)(
    'does not reuse a cached file another user owns, even in its own dir (needs root)',
    () => {
      const bytes = 'binary bytes, foreign cached file'
      const { binary, cacheDir } = closedBinary('closed-foreign-file', bytes)
      const planted = plant(cacheDir, bytes)
      chmodSync(cacheDir, 0o755)
      chownSync(planted, nobody.uid, nobody.gid)
      const staged = stageBinaryFor(binary, nobody, root)
      expect(readFileSync(staged, 'utf8')).toBe(bytes)
      expect(statSync(staged).uid).toBe(process.getuid?.())
    },
  )
})
