import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { assertReachable } from './check-access.ts'

const root = mkdtempSync(join(tmpdir(), 'testkit-access-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const nobody = { uid: 65534, gid: 65534 }

describe('assertReachable', () => {
  it('names the first directory the user cannot search', () => {
    const closed = join(root, 'closed')
    mkdirSync(join(closed, 'inner'), { recursive: true })
    chmodSync(root, 0o755)
    chmodSync(closed, 0o700)
    expect(() => assertReachable(join(closed, 'inner'), nobody, 'workspace')).toThrow(
      `${closed} is not searchable for it`,
    )
  })

  it('accepts world-searchable chains and skips missing ancestors', () => {
    const open = join(root, 'open')
    mkdirSync(open, { recursive: true, mode: 0o755 })
    chmodSync(root, 0o755)
    expect(() => assertReachable(join(open, 'not-yet', 'x'), nobody, 'workspace')).not.toThrow()
  })
})
