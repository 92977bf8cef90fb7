import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { RUNTIME_VERSION } from '../../stack/managed-files.ts'
import { runtimeVersionChecks } from './runtime-version-check.ts'

const stack = useTempStack({ init: 'in-process' })

/** A stand-in binary printing `output` and exiting with `code`; records its HOME. */
function fakeBinary(name: string, output: string, code = 0): string {
  const path = join(stack.root, name)
  writeFileSync(path, `#!/bin/sh\necho "$HOME" > "${path}.home"\necho ${output}\nexit ${code}\n`, {
    mode: 0o755,
  })
  return path
}

const run = (bin: string) =>
  runtimeVersionChecks(stackLayout(stack.dir), undefined, { ...process.env, SALLYPORT_OPENCODE_BIN: bin })

describe('runtimeVersionChecks', () => {
  it('passes the pinned version, run with a throw-away HOME outside the stack', () => {
    const bin = fakeBinary('pinned', RUNTIME_VERSION)
    expect(run(bin)).toEqual([
      { name: 'runtime', status: 'ok', detail: `opencode ${RUNTIME_VERSION} (pinned)` },
    ])
    const home = readFileSync(`${bin}.home`, 'utf8').trim()
    expect(home).toMatch(/sallyport-doctor-[^/]+\/home$/)
    expect(home.startsWith(stack.dir)).toBe(false)
  })

  it('fails another version, naming both', () => {
    expect(run(fakeBinary('other', '0.0.1'))).toEqual([
      {
        name: 'runtime',
        status: 'fail',
        detail: `opencode 0.0.1, expected the pinned ${RUNTIME_VERSION}`,
        fix: 'unset SALLYPORT_OPENCODE_BIN or reinstall',
      },
    ])
  })

  it('fails a binary that exits non-zero or prints nothing', () => {
    const expected = {
      name: 'runtime',
      status: 'fail',
      detail: 'the opencode binary did not report a version',
      fix: 'reinstall sallyport',
    }
    expect(run(fakeBinary('failing', RUNTIME_VERSION, 1))).toEqual([expected])
    expect(run(fakeBinary('silent', ''))).toEqual([expected])
  })

  it('fails when the override names no file, without running anything', () => {
    expect(run(join(stack.root, 'missing'))).toEqual([
      {
        name: 'runtime',
        status: 'fail',
        detail: 'SALLYPORT_OPENCODE_BIN does not exist',
        fix: 'reinstall sallyport',
      },
    ])
  })
})
