import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { RuntimeProcessError } from './errors.ts'
import { findOpencodeBinary, opencodePlatformPackages, resolveOpencodeBinary } from './resolve-binary.ts'

const scratch = mkdtempSync(join(tmpdir(), 'runtime-process-bin-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe('resolveOpencodeBinary', () => {
  it('finds the executable platform binary of the pinned opencode-ai', () => {
    const path = resolveOpencodeBinary({ env: {} })
    expect(path).toMatch(/opencode-(linux|darwin)-[a-z0-9-]+[\\/]bin[\\/]opencode$/)
    expect(path).toContain('1.18.33')
    expect(() => accessSync(path, constants.X_OK)).not.toThrow()
  })

  it('honours SALLYPORT_OPENCODE_BIN when the file exists', () => {
    const fake = join(scratch, 'opencode')
    writeFileSync(fake, '#!/bin/sh\n', { mode: 0o755 })
    expect(resolveOpencodeBinary({ env: { SALLYPORT_OPENCODE_BIN: fake } })).toBe(fake)
  })

  it('reads another override variable when told to, and ignores the default one then', () => {
    const fake = join(scratch, 'other-opencode')
    writeFileSync(fake, '#!/bin/sh\n', { mode: 0o755 })
    const env = { OPENCODE_BIN: fake, SALLYPORT_OPENCODE_BIN: '/nonexistent/opencode' }
    expect(resolveOpencodeBinary({ env, overrideVariable: 'OPENCODE_BIN' })).toBe(fake)
  })

  it('refuses an override that does not exist, naming the variable, not the path', () => {
    const env = { SALLYPORT_OPENCODE_BIN: join(scratch, 'missing') }
    expect(findOpencodeBinary({ env })).toMatchObject({
      ok: false,
      code: 'ERR_RUNTIME_PROCESS_BINARY_NOT_FOUND',
      reason: 'override-missing',
      message: 'SALLYPORT_OPENCODE_BIN does not exist',
    })
    const error = (() => {
      try {
        resolveOpencodeBinary({ env })
      } catch (e) {
        return e
      }
    })()
    expect(RuntimeProcessError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ code: 'ERR_RUNTIME_PROCESS_BINARY_NOT_FOUND' })
  })
})

describe('opencodePlatformPackages', () => {
  it.each([
    [
      'linux',
      'x64',
      [
        'opencode-linux-x64',
        'opencode-linux-x64-baseline',
        'opencode-linux-x64-musl',
        'opencode-linux-x64-baseline-musl',
      ],
    ],
    ['linux', 'arm64', ['opencode-linux-arm64', 'opencode-linux-arm64-musl']],
    ['darwin', 'arm64', ['opencode-darwin-arm64', 'opencode-darwin-arm64-baseline']],
  ])('%s-%s: most specific first', (platform, arch, expected) => {
    expect(opencodePlatformPackages(platform, arch)).toEqual(expected)
  })
})
