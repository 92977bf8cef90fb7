import { execFileSync } from 'node:child_process'
import { closeSync, ftruncateSync, linkSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { GUARD_MESSAGES } from '../src/errors.ts'
import { createWorkspaceGuard, type WorkspaceGuard } from '../src/index.ts'
import {
  createWorkspaceFixture,
  expectCode,
  guardError,
  type WorkspaceFixture,
} from './helpers/workspace-fixture.ts'

const PEM = (label: string): string =>
  `-----BEGIN ${label}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END ${label}-----\n`

/** Decided when the file is loaded: `it.skipIf` reads it before any hook runs. */
const MKNOD_WORKS = ((): boolean => {
  const directory = mkdtempSync(join(tmpdir(), 'workspace-guard-mknod-'))
  try {
    execFileSync('mknod', [join(directory, 'probe'), 'c', '1', '3'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
})()

let fx: WorkspaceFixture
let guard: WorkspaceGuard
let socketServer: Server

beforeAll(async () => {
  fx = createWorkspaceFixture()
  fx.write('src/index.ts', 'export const answer = 42\n')
  fx.write('README.md', '# hello\n')
  fx.write('empty.txt', '')
  fx.write('bom.txt', '\ufeffwith bom\n')
  fx.write('.env', 'TOKEN=1\n')
  fx.write('.git/config', '[core]\n')
  fx.write('config/.env.example', 'TOKEN=\n')
  fx.write('docs/guide.md', 'guide\n')
  fx.writeOutside('secret-dir/data.txt', `${fx.canary}\n`)
  fx.link(fx.canaryPath, 'outside-link.txt') // absolute target outside
  fx.link('../outside/canary.txt', 'relative-outside-link.txt')
  fx.link(fx.outside, 'outside-dir') // directory pointing out
  fx.link('../outside/missing.txt', 'dangling-link.txt')
  fx.link('docs/guide.md', 'guide-link.md') // inside, allowed
  fx.link(join(fx.root, 'docs', 'guide.md'), 'absolute-inside-link.md')
  fx.link('.env', 'notes.txt') // innocent name, denied target
  fx.link('.git', 'vcs') // innocent directory name, denied target
  fx.link('loop-b', 'loop-a')
  fx.link('loop-a', 'loop-b')
  fx.link('/dev/null', 'null-link')
  fx.link('/dev/zero', 'zero-link.txt')
  fx.link('/proc/self/environ', 'environ.txt')
  fx.link('/proc/self/fd/0', 'stdin-link')
  fx.fifo('pipe.txt')
  if (MKNOD_WORKS) execFileSync('mknod', [join(fx.root, 'device.txt'), 'c', '1', '5']) // /dev/zero
  linkSync(fx.canaryPath, join(fx.root, 'hard-link-out.txt'))
  fx.write('twin-a.txt', 'twin\n')
  linkSync(join(fx.root, 'twin-a.txt'), join(fx.root, 'twin-b.txt'))
  fx.write('binary.dat', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))
  fx.write('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9])) // "café" in Latin-1
  fx.write('innocent.txt', `my notes\n${PEM('OPENSSH PRIVATE KEY')}`)
  fx.write('cert.txt', PEM('CERTIFICATE'))
  const sparse = openSync(join(fx.root, 'huge.log'), 'w')
  ftruncateSync(sparse, 64 * 1024 ** 3)
  closeSync(sparse)
  fx.write('exact.txt', 'a'.repeat(256 * 1024))
  fx.write('over.txt', 'a'.repeat(256 * 1024 + 1))
  socketServer = createServer()
  await new Promise<void>((resolve) => socketServer.listen(join(fx.root, 'socket.txt'), resolve))
  guard = createWorkspaceGuard({ root: fx.root })
})

afterAll(async () => {
  await new Promise((resolve) => socketServer.close(resolve))
  fx.remove()
})

describe('read: text files', () => {
  it('returns the text, the normalised path and a media type', async () => {
    await expect(guard.read('./src//index.ts')).resolves.toEqual({
      path: 'src/index.ts',
      text: 'export const answer = 42\n',
      mimeType: 'text/typescript',
      truncated: false,
    })
    expect((await guard.read('README.md')).mimeType).toBe('text/markdown')
  })

  it('reads an empty file as empty text', async () => {
    expect((await guard.read('empty.txt')).text).toBe('')
  })

  it('drops a UTF-8 byte order mark', async () => {
    expect((await guard.read('bom.txt')).text).toBe('with bom\n')
  })

  it('reads .env.example, the one allowed .env file', async () => {
    expect((await guard.read('config/.env.example')).text).toBe('TOKEN=\n')
  })

  it('follows a symlink whose target is inside the root and allowed', async () => {
    expect((await guard.read('guide-link.md')).text).toBe('guide\n')
    expect((await guard.read('absolute-inside-link.md')).text).toBe('guide\n')
  })

  it('reads a file of exactly the cap', async () => {
    expect((await guard.read('exact.txt')).text).toHaveLength(256 * 1024)
  })
})

describe('read: missing files', () => {
  it('says not found for a missing file or directory inside the root', async () => {
    await expectCode(guard.read('src/missing.ts'), 'ERR_GUARD_NOT_FOUND')
    await expectCode(guard.read('nope/missing.ts'), 'ERR_GUARD_NOT_FOUND')
    await expectCode(guard.read('README.md/child'), 'ERR_GUARD_NOT_FOUND')
  })

  it('says not found for a directory', async () => {
    await expectCode(guard.read('src'), 'ERR_GUARD_NOT_FOUND')
  })

  it('says denied, not "not found", for a missing denied name', async () => {
    await expectCode(guard.read('missing/.env'), 'ERR_GUARD_DENIED')
    await expectCode(guard.read('.ssh/id_rsa'), 'ERR_GUARD_DENIED')
  })

  it('says denied for a missing file behind a directory symlink that leaves the root', async () => {
    await expectCode(guard.read('outside-dir/missing.txt'), 'ERR_GUARD_DENIED')
    await expectCode(guard.read('outside-dir/canary.txt'), 'ERR_GUARD_DENIED')
  })

  it('says denied for a dangling symlink (its target could be anywhere)', async () => {
    await expectCode(guard.read('dangling-link.txt'), 'ERR_GUARD_DENIED')
  })
})

describe('read: symlinks, special files, links', () => {
  it.each([
    ['a file symlink to an absolute path outside', 'outside-link.txt'],
    ['a file symlink to a relative path outside', 'relative-outside-link.txt'],
    ['a file inside a directory symlink that points outside', 'outside-dir/secret-dir/data.txt'],
    ['a symlink named notes.txt pointing at .env', 'notes.txt'],
    ['a file under a symlink to .git', 'vcs/config'],
    ['a symlink loop', 'loop-a'],
    ['a symlink to /dev/null', 'null-link'],
    ['a symlink to /dev/zero', 'zero-link.txt'],
    ['a symlink to /proc/self/environ', 'environ.txt'],
    ['a symlink to a descriptor of the server process', 'stdin-link'],
    ['a FIFO (without hanging)', 'pipe.txt'],
    ['a Unix socket', 'socket.txt'],
    ['a hard link to a file outside the root (nlink > 1)', 'hard-link-out.txt'],
    ['a hard-linked file inside the root (its other name could be anywhere)', 'twin-a.txt'],
  ])('denies %s', async (_label, path) => {
    const started = performance.now()
    await expectCode(guard.read(path), 'ERR_GUARD_DENIED')
    expect(performance.now() - started).toBeLessThan(5000)
  })

  it.skipIf(!MKNOD_WORKS)(
    'denies a character device under the root (skipped without CAP_MKNOD)',
    async () => {
      await expectCode(guard.read('device.txt'), 'ERR_GUARD_DENIED')
    },
  )

  it('denies procfs files, which report size 0 but have content', async () => {
    const proc = createWorkspaceGuard({ root: '/proc/self' })
    await expectCode(proc.read('environ'), 'ERR_GUARD_DENIED')
    await expectCode(proc.read('status'), 'ERR_GUARD_DENIED')
    await expectCode(proc.read('cmdline'), 'ERR_GUARD_DENIED')
  })
})

describe('read: content rules', () => {
  it('refuses a file over the cap without reading it (64 GiB sparse file)', async () => {
    const started = performance.now()
    await expectCode(guard.read('huge.log'), 'ERR_GUARD_TOO_LARGE')
    expect(performance.now() - started).toBeLessThan(2000)
  })

  it('refuses a file one byte over the cap', async () => {
    await expectCode(guard.read('over.txt'), 'ERR_GUARD_TOO_LARGE')
  })

  it('never asks the descriptor for more than cap + 1 bytes', async () => {
    const probe = await open(join(fx.root, 'README.md'), 'r')
    const prototype = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<unknown> }
    await probe.close()
    const spy = vi.spyOn(prototype, 'read')
    try {
      for (const path of ['exact.txt', 'over.txt', 'huge.log', 'README.md'])
        await guard.read(path).catch(() => {})
      const requested = spy.mock.calls.map((call) => call[2] as number)
      expect(requested.length).toBeGreaterThan(0)
      for (const length of requested) expect(length).toBeLessThanOrEqual(256 * 1024 + 1)
    } finally {
      spy.mockRestore()
    }
  })

  it('honours a smaller maxBytes', async () => {
    const small = createWorkspaceGuard({ root: fx.root, maxBytes: 6 })
    await expectCode(small.read('README.md'), 'ERR_GUARD_TOO_LARGE')
    expect((await small.read('docs/guide.md')).text).toBe('guide\n')
  })

  it('refuses binary content and invalid UTF-8 as not text', async () => {
    await expectCode(guard.read('binary.dat'), 'ERR_GUARD_NOT_TEXT')
    await expectCode(guard.read('latin1.txt'), 'ERR_GUARD_NOT_TEXT')
  })

  it('denies a private key body under an innocent name', async () => {
    await expectCode(guard.read('innocent.txt'), 'ERR_GUARD_DENIED')
  })

  it('reads a certificate (public material)', async () => {
    expect((await guard.read('cert.txt')).text).toContain('BEGIN CERTIFICATE')
  })
})

describe('read: errors say nothing', () => {
  const failing = [
    '.env',
    'missing/.env',
    'notes.txt',
    'outside-link.txt',
    'outside-dir/missing.txt',
    'outside-dir/canary.txt',
    '../outside/canary.txt',
    '/etc/passwd',
    'innocent.txt',
    'hard-link-out.txt',
    'pipe.txt',
    'src/missing.ts',
    'binary.dat',
    'over.txt',
  ]

  it('uses one fixed message per code, never a path', async () => {
    for (const path of failing) {
      const error = await guardError(guard.read(path))
      expect(error.message, path).toBe(GUARD_MESSAGES[error.code])
      expect(error.message).not.toContain('/')
      expect(error.message).not.toContain(fx.base)
      expect(error.cause).toBeUndefined()
      expect(String(error.stack)).not.toContain(fx.base)
    }
  })

  it('gives a name denied before any I/O and a path denied after canonicalisation the same error', async () => {
    const byName = await guardError(guard.read('.env'))
    const byTarget = await guardError(guard.read('notes.txt'))
    const byEscape = await guardError(guard.read('outside-dir/canary.txt'))
    const byContent = await guardError(guard.read('innocent.txt'))
    for (const error of [byTarget, byEscape, byContent]) {
      expect([error.code, error.message]).toEqual([byName.code, byName.message])
    }
  })

  it('refuses a path that is not a string as invalid', async () => {
    await expectCode(guard.read(42 as unknown as string), 'ERR_GUARD_INVALID')
  })

  it('never returns the canary, whatever the path', async () => {
    for (const path of [...failing, 'outside-dir/canary.txt', 'relative-outside-link.txt']) {
      const result = await guard.read(path).catch(() => undefined)
      expect(result?.text ?? '').not.toContain(fx.canary)
    }
  })
})

describe('check', () => {
  it('is the pure rule set, with no I/O', async () => {
    expect(guard.check('./src/index.ts')).toEqual({ ok: true, path: 'src/index.ts' })
    // Existence does not matter to check: it answers the same for a missing file.
    expect(guard.check('src/missing.ts')).toEqual({ ok: true, path: 'src/missing.ts' })
    expect(guard.check('notes.txt').ok).toBe(true) // the symlink is caught by read, after canonicalisation
    expect(guard.check('.env')).toMatchObject({ ok: false, code: 'ERR_GUARD_DENIED' })
  })
})
