import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { configChecks } from './config-check.ts'

const stack = useTempStack({ init: 'in-process' })

describe('configChecks', () => {
  it('passes a valid sallyport.json and returns it', async () => {
    const { checks, config } = await configChecks(stackLayout(stack.dir))
    expect(checks).toEqual([{ name: 'config', status: 'ok', detail: 'sallyport.json is valid' }])
    expect(config?.version).toBe(1)
  })

  it('fails an invalid one with the first problem and what to do, and returns no configuration', async () => {
    const file = join(stack.dir, 'sallyport.json')
    const saved = readFileSync(file, 'utf8')
    try {
      writeFileSync(file, '{"version":1,"gateway":{"port":0}}')
      const { checks, config } = await configChecks(stackLayout(stack.dir))
      expect(config).toBeUndefined()
      expect(checks).toEqual([
        {
          name: 'config',
          status: 'fail',
          detail: expect.stringMatching(/^sallyport\.json: /),
          fix: 'run `sallyport init` or correct sallyport.json',
        },
      ])
      rmSync(file)
      expect((await configChecks(stackLayout(stack.dir))).checks[0]?.detail).toBe(
        'sallyport.json not found: run `sallyport init` first',
      )
    } finally {
      writeFileSync(file, saved)
    }
  })
})
