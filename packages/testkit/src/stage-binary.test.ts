import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stageBinaryFor } from './stage-binary.ts'

const root = mkdtempSync(join(tmpdir(), 'testkit-stage-'))
chmodSync(root, 0o755)
afterAll(() => rmSync(root, { recursive: true, force: true }))
const nobody = { uid: 65534, gid: 65534 }

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
    expect(staged.startsWith(join(root, 'agentgate-opencode-'))).toBe(true)
    expect(readFileSync(staged, 'utf8')).toBe('binary bytes')
    expect(statSync(staged).mode & 0o777).toBe(0o755)
    expect(statSync(join(closed, 'opencode')).mode & 0o777).toBe(0o700)
    expect(stageBinaryFor(join(closed, 'opencode'), nobody, root)).toBe(staged)
  })
})
