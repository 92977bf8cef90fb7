import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '@sallyport/testkit'
import { afterAll, beforeAll, expect } from 'vitest'
import { initStack } from '../src/commands/init.ts'
import { runCli, tempDir } from './cli-process.ts'

/** A stack in a temporary directory: `<root>/stack`, set up by `init`. */
export interface TempStack {
  /** The temporary directory (room for links, fake binaries and records next to the stack). */
  readonly root: string
  /** The stack directory, `<root>/stack`. */
  readonly dir: string
  /** `gateway.port` of its sallyport.json: a free port, not 8787 (another stack may hold that). */
  readonly gatewayPort: number
}

/**
 * Registers `beforeAll`/`afterAll` hooks that create a fresh stack in a temporary directory and
 * remove it after the file's tests. `init: 'cli'` (the default, for end-to-end tests) runs the
 * built `sallyport init` and expects exit 0; `'in-process'` calls `initStack` (unit tests). Read the
 * fields inside tests or hooks, not at the top level (they are set by the `beforeAll` hook).
 */
export function useTempStack(options: { init?: 'cli' | 'in-process' } = {}): TempStack {
  let current: TempStack | undefined
  let remove = (): void => {}
  beforeAll(async () => {
    const temp = tempDir()
    remove = temp.remove
    const dir = join(temp.path, 'stack')
    if (options.init === 'in-process') await initStack({ dir, env: process.env })
    else expect((await runCli(['init', '--dir', dir])).code).toBe(0)
    // Free gateway and moderator ports (init already moves the native port off a taken 3810), so
    // a stack running on the defaults elsewhere on the machine does not show up in these tests.
    const file = join(dir, 'sallyport.json')
    const config = JSON.parse(readFileSync(file, 'utf8'))
    config.gateway.port = await freePort()
    do config.moderator.port = await freePort()
    while (config.moderator.port === config.gateway.port)
    writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`)
    current = { root: temp.path, dir, gatewayPort: config.gateway.port }
  })
  afterAll(() => remove())
  const ready = (): TempStack => {
    if (!current) throw new Error('useTempStack: read the stack inside a test or hook')
    return current
  }
  return {
    get root() {
      return ready().root
    },
    get dir() {
      return ready().dir
    },
    get gatewayPort() {
      return ready().gatewayPort
    },
  }
}
