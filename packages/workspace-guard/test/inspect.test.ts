import { linkSync, mkdirSync, readFileSync, realpathSync, symlinkSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GUARD_MESSAGES } from '../src/errors.ts'
import { createWorkspaceGuard, type InspectResult, type WorkspaceGuard } from '../src/index.ts'
import { createWorkspaceFixture, type WorkspaceFixture } from './helpers/workspace-fixture.ts'

let fx: WorkspaceFixture
let guard: WorkspaceGuard
let root: string

beforeAll(() => {
  fx = createWorkspaceFixture()
  root = realpathSync(fx.root)
  fx.write('src/index.ts', 'export const answer = 42\n')
  fx.write('notes/plan.md', '# plan\n')
  fx.write('.env', 'TOKEN=x\n')
  fx.write('KEY.PEM', 'key\n')
  fx.write('.git/config', '[core]\n')
  fx.write('big.log', '')
  truncateSync(join(fx.root, 'big.log'), 2048)
  fx.writeOutside('state/credentials/owner/key', 'owner-key\n')
  fx.link(fx.canaryPath, 'notes.txt')
  fx.link(join(fx.outside, 'state/credentials/owner/key'), 'owner-key-link')
  fx.link('/proc/self/environ', 'environ')
  fx.link('/dev/zero', 'zero')
  fx.link('..', 'rootlink')
  fx.link(fx.outside, 'outside-dir')
  fx.link('src/index.ts', 'inside-link.ts')
  fx.link('.env', 'innocent.txt')
  fx.link('src', 'srclink')
  fx.link(join(fx.root, 'missing-target.txt'), 'dangling')
  fx.fifo('pipe')
  linkSync(fx.canaryPath, join(fx.root, 'hardlink.txt'))
  mkdirSync(join(fx.root, 'empty'))
  guard = createWorkspaceGuard({ root: fx.root, maxBytes: 1024 })
})

afterAll(() => fx.remove())

const denied: InspectResult = {
  ok: false,
  code: 'ERR_GUARD_DENIED',
  message: GUARD_MESSAGES.ERR_GUARD_DENIED,
}

describe('inspect for read', () => {
  it('names the canonical target of an ordinary file', async () => {
    expect(await guard.inspect('src/index.ts', 'read')).toEqual({
      ok: true,
      path: 'src/index.ts',
      absolute: join(root, 'src/index.ts'),
      kind: 'file',
    })
  })

  it('follows a symlink that stays inside the root and names its target', async () => {
    expect(await guard.inspect('inside-link.ts', 'read')).toMatchObject({
      ok: true,
      path: 'src/index.ts',
      absolute: join(root, 'src/index.ts'),
    })
    expect(await guard.inspect('srclink/index.ts', 'read')).toMatchObject({ ok: true, path: 'src/index.ts' })
  })

  it('accepts the root and directories inside it', async () => {
    expect(await guard.inspect('.', 'read')).toEqual({
      ok: true,
      path: '',
      absolute: root,
      kind: 'directory',
    })
    expect(await guard.inspect('', 'list')).toMatchObject({ ok: true, kind: 'directory' })
    expect(await guard.inspect('notes', 'list')).toMatchObject({ ok: true, path: 'notes', kind: 'directory' })
  })

  it.each([
    ['a symlink to a file outside the root', 'notes.txt'],
    ['a symlink to the stack state', 'owner-key-link'],
    ['a symlink to /proc/self/environ', 'environ'],
    ['a symlink to /dev/zero', 'zero'],
    ['a directory symlink to the parent', 'rootlink/outside/canary.txt'],
    ['a directory symlink listed', 'rootlink'],
    ['a directory outside, listed', 'outside-dir'],
    ['a file through a directory symlink outside', 'outside-dir/state/credentials/owner/key'],
    ['an innocent name linked to .env', 'innocent.txt'],
    ['a FIFO', 'pipe'],
    ['a hard link to a file outside', 'hardlink.txt'],
    ['.env', '.env'],
    ['.ENV in upper case', '.ENV'],
    ['KEY.PEM in upper case', 'KEY.PEM'],
    ['the .git directory', '.git'],
    ['a file in .git', '.git/config'],
    ['a traversal', '../outside/canary.txt'],
    ['an absolute path', fx?.canaryPath ?? '/etc/passwd'],
    ['a dangling symlink', 'dangling'],
  ])('refuses %s', async (_name, path) => {
    expect(await guard.inspect(path, 'read')).toEqual(denied)
    expect(await guard.inspect(path, 'list')).toEqual(denied)
  })

  it('says not found for a missing file reached without a symlink', async () => {
    expect(await guard.inspect('src/nope.ts', 'read')).toMatchObject({
      ok: false,
      code: 'ERR_GUARD_NOT_FOUND',
    })
  })

  it('refuses a file over the size limit for reading', async () => {
    expect(await guard.inspect('big.log', 'read')).toMatchObject({ ok: false, code: 'ERR_GUARD_TOO_LARGE' })
  })

  it('list refuses a file (only directories are listed)', async () => {
    expect(await guard.inspect('src/index.ts', 'list')).toMatchObject({
      ok: false,
      code: 'ERR_GUARD_NOT_FOUND',
    })
  })

  it('answers invalid input with ERR_GUARD_INVALID and never throws', async () => {
    expect(await guard.inspect(42 as unknown as string, 'read')).toMatchObject({ code: 'ERR_GUARD_INVALID' })
    expect(await guard.inspect('a', 'exec' as 'read')).toMatchObject({ code: 'ERR_GUARD_INVALID' })
  })
})

describe('inspect for write', () => {
  it('accepts an existing file and a new one in an existing or new directory', async () => {
    expect(await guard.inspect('src/index.ts', 'write')).toMatchObject({ ok: true, kind: 'file' })
    expect(await guard.inspect('src/new.ts', 'write')).toEqual({
      ok: true,
      path: 'src/new.ts',
      absolute: join(root, 'src/new.ts'),
      kind: 'missing',
    })
    expect(await guard.inspect('a/b/c.txt', 'write')).toMatchObject({
      ok: true,
      kind: 'missing',
      path: 'a/b/c.txt',
    })
  })

  it('names the canonical target when writing through a symlinked directory inside the root', async () => {
    expect(await guard.inspect('srclink/new.ts', 'write')).toMatchObject({
      ok: true,
      path: 'src/new.ts',
      absolute: join(root, 'src/new.ts'),
    })
  })

  it.each([
    ['the root', '.'],
    ['a directory', 'src'],
    ['a symlink to a file outside', 'notes.txt'],
    ['a new file in a directory symlinked outside', 'outside-dir/planted.sh'],
    ['a new file through a parent symlink', 'rootlink/outside/planted.sh'],
    ['a dangling symlink (the write would create its target)', 'dangling'],
    ['a hard link to a file outside', 'hardlink.txt'],
    ['a FIFO', 'pipe'],
    ['a git hook', '.git/hooks/post-checkout'],
    ['a new .env', 'app/.env'],
    ['a new upper-case private key', 'certs/SERVER.KEY'],
    ['a file below a regular file', 'src/index.ts/x'],
    ['a traversal', '../outside/planted.sh'],
  ])('refuses %s', async (_name, path) => {
    expect(await guard.inspect(path, 'write')).toEqual(denied)
  })

  it('never changed anything outside', () => {
    expect(readFileSync(fx.canaryPath, 'utf8')).toBe(`${fx.canary}\n`)
  })
})

describe('inspect against a swapped tree', () => {
  it('follows the tree as it is now: a directory replaced by a link outside is refused', async () => {
    const local = createWorkspaceFixture()
    try {
      local.write('docs/a.txt', 'a\n')
      const g = createWorkspaceGuard({ root: local.root })
      expect(await g.inspect('docs/a.txt', 'read')).toMatchObject({ ok: true })
      const { renameSync } = await import('node:fs')
      renameSync(join(local.root, 'docs'), join(local.root, 'docs-old'))
      symlinkSync(local.outside, join(local.root, 'docs'))
      expect(await g.inspect('docs/canary.txt', 'read')).toEqual(denied)
      expect(await g.inspect('docs/a.txt', 'write')).toEqual(denied)
    } finally {
      local.remove()
    }
  })
})
