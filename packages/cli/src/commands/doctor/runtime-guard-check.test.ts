import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { runtimeGuardWrapperPath } from '../../stack/runtime-guard-plugin.ts'
import { runtimeGuardChecks } from './runtime-guard-check.ts'

const stack = useTempStack({ init: 'in-process' })

describe('runtimeGuardChecks', () => {
  it('passes with the bundled module and the release wrapper', async () => {
    expect(await runtimeGuardChecks(stackLayout(stack.dir))).toEqual([
      {
        name: 'runtime guard',
        status: 'ok',
        detail: 'the assistant runtime loads the workspace guard for remote agents',
      },
    ])
  })

  it('warns about a changed wrapper: up restores it', async () => {
    const layout = stackLayout(stack.dir)
    const path = runtimeGuardWrapperPath(layout)
    const saved = readFileSync(path)
    chmodSync(path, 0o644)
    writeFileSync(path, '// changed\n')
    try {
      expect(await runtimeGuardChecks(layout)).toEqual([
        {
          name: 'runtime guard',
          status: 'warn',
          detail: expect.stringMatching(/plugins\/\S+ is not the release version$/),
          fix: '`sallyport up` restores it (or run `sallyport init`)',
        },
      ])
    } finally {
      writeFileSync(path, saved)
      chmodSync(path, 0o444)
    }
  })
})
