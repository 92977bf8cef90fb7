import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { peerEnv, resolveBin } from './resolve-bin.ts'

describe('resolveBin', () => {
  it.each([
    ['@modelcontextprotocol/conformance', 'conformance'],
    ['@modelcontextprotocol/inspector', 'inspector'],
  ])('finds the %s bin script', (pkg, name) => {
    expect(existsSync(resolveBin(pkg, name))).toBe(true)
  })

  it('fails with ERR_PEER_SPAWN for a bin the package does not declare', () => {
    expect(() => resolveBin('@modelcontextprotocol/conformance', 'nope')).toThrow(
      expect.objectContaining({ code: 'ERR_PEER_SPAWN' }),
    )
  })
})

describe('peerEnv', () => {
  it('is PATH, the given HOME, no colours, and nothing else of this process', () => {
    const env = peerEnv('/tmp/h', { EXTRA: '1' })
    expect(Object.keys(env).sort()).toEqual(['EXTRA', 'FORCE_COLOR', 'HOME', 'LANG', 'NO_COLOR', 'PATH'])
    expect(env.HOME).toBe('/tmp/h')
  })
})
