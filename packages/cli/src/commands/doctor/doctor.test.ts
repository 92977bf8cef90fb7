import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import type { Io } from '../../io.ts'
import { RUNTIME_VERSION } from '../../stack/managed-files.ts'
import { doctor, formatChecks } from './doctor.ts'

const stack = useTempStack({ init: 'in-process' })

function collect(env: NodeJS.ProcessEnv): Io & { stdout: () => string } {
  let out = ''
  const append = (text: string): void => {
    out += text
  }
  return { out: append, err: () => {}, env, stdout: () => out }
}

function fakeBinary(): string {
  const path = join(stack.root, 'opencode')
  writeFileSync(path, `#!/bin/sh\necho ${RUNTIME_VERSION}\n`, { mode: 0o755 })
  return path
}

describe('doctor', () => {
  it('runs every check in order and prints them as JSON with ok', async () => {
    const io = collect({ ...process.env, SALLYPORT_OPENCODE_BIN: fakeBinary() })
    const checks = await doctor({ dir: stack.dir, json: true }, io)
    expect(checks.map((c) => c.name)).toEqual([
      'config',
      'layout',
      'permissions',
      'config dir system/assistant',
      'config dir system/moderator',
      'config dir config/assistant',
      'preferences',
      'runtime guard',
      'moderator model',
      'runtime',
      'gateway',
      'assistant runtime',
      'moderator runtime',
      'model readiness',
      'scheduler',
      'tasks',
    ])
    expect(JSON.parse(io.stdout())).toEqual({ ok: true, checks })
  })

  it('probes the gateway where up binds it: SALLYPORT_GATEWAY_HOST, a wildcard on loopback', async () => {
    const io = collect({ ...process.env, SALLYPORT_OPENCODE_BIN: fakeBinary(), SALLYPORT_GATEWAY_HOST: '::' })
    const checks = await doctor({ dir: stack.dir, json: true }, io)
    // Free or not (another stack may hold it), the address probed is the loopback one.
    expect(checks.find((c) => c.name === 'gateway')?.detail).toContain(`::1:${stack.gatewayPort}`)
  })

  it('throws ERR_CLI_CHECK_FAILED counting the failures, after printing them', async () => {
    const secret = join(stack.dir, 'state/handle-secret')
    chmodSync(secret, 0o644)
    try {
      const io = collect({ ...process.env, SALLYPORT_OPENCODE_BIN: join(stack.root, 'missing') })
      await expect(doctor({ dir: stack.dir }, io)).rejects.toMatchObject({
        code: 'ERR_CLI_CHECK_FAILED',
        message: '2 problems found (see above)',
      })
      expect(io.stdout()).toMatch(/^FAIL {2}permissions: .*\n {6}fix: chmod 600/m)
      expect(io.stdout()).toMatch(/^FAIL {2}runtime: SALLYPORT_OPENCODE_BIN does not exist$/m)
    } finally {
      chmodSync(secret, 0o600)
    }
  })

  it('skips the process checks without a valid configuration', async () => {
    const io = collect({ ...process.env, SALLYPORT_OPENCODE_BIN: fakeBinary() })
    const checks = await doctor({ dir: join(stack.root, 'nothing-here') }, io).catch(() => undefined)
    expect(checks).toBeUndefined()
    expect(io.stdout()).toMatch(/^FAIL {2}config: sallyport\.json not found/)
    expect(io.stdout()).not.toContain('gateway')
  })
})

describe('formatChecks', () => {
  it('one line per check, a fix line under warnings and failures only', () => {
    expect(
      formatChecks([
        { name: 'a', status: 'ok', detail: 'fine', fix: 'never shown' },
        { name: 'b', status: 'warn', detail: 'hm', fix: 'do x' },
        { name: 'c', status: 'fail', detail: 'bad' },
      ]),
    ).toBe('ok    a: fine\nWARN  b: hm\n      fix: do x\nFAIL  c: bad\n')
  })
})
