import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { configDirChecks } from './config-dirs-check.ts'

const stack = useTempStack({ init: 'in-process' })

/** Runs `change` with `dir` writable (init makes system/ read-only), then restores its mode. */
function withWritable(dir: string, change: () => void): void {
  chmodSync(dir, 0o755)
  try {
    change()
  } finally {
    chmodSync(dir, 0o555)
  }
}

describe('configDirChecks', () => {
  it('passes the three pre-seeded config directories', async () => {
    expect(await configDirChecks(stackLayout(stack.dir))).toEqual(
      ['system/assistant', 'system/moderator', 'config/assistant'].map((name) => ({
        name: `config dir ${name}`,
        status: 'ok',
        detail: 'pre-seeded; no plugin install at startup',
      })),
    )
  })

  it('warns about package files the runtime bootstrapped anyway, saying what to delete', async () => {
    const dir = join(stack.dir, 'system/moderator')
    withWritable(dir, () => writeFileSync(join(dir, 'package.json'), '{}'))
    withWritable(join(dir, 'node_modules'), () => mkdirSync(join(dir, 'node_modules', 'x')))
    try {
      expect((await configDirChecks(stackLayout(stack.dir)))[1]).toEqual({
        name: 'config dir system/moderator',
        status: 'warn',
        detail: 'package files were bootstrapped here',
        fix: 'delete system/moderator/node_modules/* and system/moderator/package.json',
      })
    } finally {
      withWritable(dir, () => rmSync(join(dir, 'package.json')))
      withWritable(join(dir, 'node_modules'), () =>
        rmSync(join(dir, 'node_modules', 'x'), { recursive: true }),
      )
    }
  })

  it('fails a directory without the seed lock file', async () => {
    const dir = join(stack.dir, 'config/assistant')
    const lock = join(dir, 'package-lock.json')
    const saved = readFileSync(lock)
    withWritable(dir, () => rmSync(lock))
    try {
      expect((await configDirChecks(stackLayout(stack.dir)))[2]).toEqual({
        name: 'config dir config/assistant',
        status: 'fail',
        detail: 'not pre-seeded: the runtime would npm-install its plugin SDK here',
        fix: 'run `sallyport init` to add the seed files',
      })
    } finally {
      withWritable(dir, () => writeFileSync(lock, saved, { mode: 0o444 }))
    }
  })
})
