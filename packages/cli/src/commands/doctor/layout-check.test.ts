import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { layoutChecks } from './layout-check.ts'

const stack = useTempStack({ init: 'in-process' })

describe('layoutChecks', () => {
  it('passes a fresh stack', async () => {
    expect(await layoutChecks(stackLayout(stack.dir))).toEqual([
      { name: 'layout', status: 'ok', detail: 'every directory and file of the stack is present' },
    ])
  })

  it('names what is missing, directories with a slash, and says to run init', async () => {
    const tasks = join(stack.dir, 'knowledge/tasks')
    const secret = join(stack.dir, 'state/handle-secret')
    renameSync(secret, `${secret}.away`)
    rmSync(tasks, { recursive: true })
    try {
      expect(await layoutChecks(stackLayout(stack.dir))).toEqual([
        {
          name: 'layout',
          status: 'fail',
          detail: 'missing: knowledge/tasks/, state/handle-secret',
          fix: `run \`sallyport init --dir ${stack.dir}\` (it only adds what is missing)`,
        },
      ])
    } finally {
      renameSync(`${secret}.away`, secret)
      mkdirSync(tasks)
    }
  })

  it('notes a user.env: it is never loaded into a runtime', async () => {
    const file = join(stack.dir, 'knowledge/env/user.env')
    mkdirSync(join(stack.dir, 'knowledge/env'), { recursive: true })
    writeFileSync(file, 'X=1\n')
    try {
      const checks = await layoutChecks(stackLayout(stack.dir))
      expect(checks[1]).toEqual({
        name: 'user.env',
        status: 'ok',
        detail: 'knowledge/env/user.env exists; it is never loaded into a runtime environment',
      })
    } finally {
      rmSync(file)
    }
  })
})
