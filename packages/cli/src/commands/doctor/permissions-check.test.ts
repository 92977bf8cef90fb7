import { chmodSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { permissionsChecks } from './permissions-check.ts'

const stack = useTempStack({ init: 'in-process' })

describe('permissionsChecks', () => {
  it('passes 0600 secrets in 0700 directories', async () => {
    expect(await permissionsChecks(stackLayout(stack.dir))).toEqual([
      { name: 'permissions', status: 'ok', detail: 'secret files are 0600 and state directories 0700' },
    ])
  })

  it('names every secret file and private directory open to group or others, with its mode', async () => {
    const secret = join(stack.dir, 'state/handle-secret')
    const key = join(stack.dir, 'state/credentials/owner/key')
    const secrets = join(stack.dir, 'knowledge/secrets')
    chmodSync(secret, 0o644)
    chmodSync(key, 0o640)
    chmodSync(secrets, 0o750)
    try {
      expect(await permissionsChecks(stackLayout(stack.dir))).toEqual([
        {
          name: 'permissions',
          status: 'fail',
          detail:
            'readable by group or others: state/handle-secret (644), state/credentials/owner/key (640), knowledge/secrets (750)',
          fix: 'chmod 600 those files and chmod 700 those directories',
        },
      ])
    } finally {
      chmodSync(secret, 0o600)
      chmodSync(key, 0o600)
      chmodSync(secrets, 0o700)
    }
  })
})
