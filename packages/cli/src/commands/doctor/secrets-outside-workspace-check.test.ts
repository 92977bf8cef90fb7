import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { secretsOutsideWorkspaceChecks } from './secrets-outside-workspace-check.ts'

const stack = useTempStack({ init: 'in-process' })

describe('secretsOutsideWorkspaceChecks', () => {
  it('says nothing about the default workspace', async () => {
    expect(await secretsOutsideWorkspaceChecks(stackLayout(stack.dir))).toEqual([])
  })

  it.each([
    ['the stack root', (dir: string) => dir, 'contains state'],
    ['state/', (dir: string) => join(dir, 'state'), 'is state'],
    [
      'a directory inside knowledge/secrets/',
      (dir: string) => join(dir, 'knowledge/secrets/x'),
      'lies inside',
    ],
  ])('fails a workspace at %s', async (_name, workspace, how) => {
    const layout = stackLayout(stack.dir, { workspace: workspace(stack.dir) })
    const checks = await secretsOutsideWorkspaceChecks(layout)
    expect(checks).toHaveLength(1)
    expect(checks[0]).toMatchObject({
      name: 'secrets outside workspace',
      status: 'fail',
      fix: 'choose a workspace outside state/ and knowledge/secrets/ (SALLYPORT_WORKSPACE); `up` and `serve` refuse to start',
    })
    expect(checks[0]?.detail).toContain(how)
    expect(checks[0]?.detail).toMatch(
      /: state\/ or knowledge\/secrets\/ would be readable through the gateway$/,
    )
  })
})
