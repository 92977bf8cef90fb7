import { accessSync, constants } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { resolveOpencodeBinary } from './resolve-binary.ts'

afterEach(() => {
  delete process.env.OPENCODE_BIN
})

describe('resolveOpencodeBinary', () => {
  it('finds the executable platform binary of the pinned opencode-ai', () => {
    const path = resolveOpencodeBinary()
    expect(path).toMatch(/opencode-(linux|darwin)-[a-z0-9-]+[\\/]bin[\\/]opencode$/)
    expect(path).toContain('1.18.33')
    expect(() => accessSync(path, constants.X_OK)).not.toThrow()
  })

  it('honours OPENCODE_BIN', () => {
    process.env.OPENCODE_BIN = '/opt/opencode'
    expect(resolveOpencodeBinary()).toBe('/opt/opencode')
  })
})
