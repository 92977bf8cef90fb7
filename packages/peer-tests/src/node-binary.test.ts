import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { compareVersions, resolvePeerNode } from './node-binary.ts'

describe('compareVersions', () => {
  it.each([
    ['22.19.0', '22.19.0', 0],
    ['22.23.3', '22.19.0', 1],
    ['22.9.0', '22.19.0', -1],
    ['23', '22.99.99', 1],
  ])('%s vs %s has sign %i', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign)
  })
})

describe('resolvePeerNode', () => {
  it('finds the registry Node 22 binary and it runs', () => {
    const node = resolvePeerNode({ minimum: '22.19.0' })
    expect(compareVersions(node.version, '22.19.0')).toBeGreaterThanOrEqual(0)
    expect(execFileSync(node.path, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${node.version}`)
  })

  it('refuses a binary older than the minimum with ERR_PEER_NODE_TOO_OLD', () => {
    expect(() => resolvePeerNode({ minimum: '99.0.0' })).toThrow(
      expect.objectContaining({ code: 'ERR_PEER_NODE_TOO_OLD' }),
    )
  })

  it('reports ERR_PEER_NODE_MISSING when the package cannot be resolved', () => {
    expect(() => resolvePeerNode({ pkg: 'node-linux-x64-not-a-package' })).toThrow(
      expect.objectContaining({ code: 'ERR_PEER_NODE_MISSING' }),
    )
  })
})
