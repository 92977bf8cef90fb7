import { copyFileSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { useTempStack } from '../../../test/temp-stack.ts'
import { stackLayout } from '../../stack/layout.ts'
import { preferencesChecks } from './preferences-check.ts'

const stack = useTempStack({ init: 'in-process' })
const prefs = (name: string): string => join(stack.dir, 'config/assistant', name)
const check = async () => (await preferencesChecks(stackLayout(stack.dir)))[0]

afterEach(() => {
  // Back to the one file init writes.
  for (const name of ['opencode.jsonc', 'config.json']) rmSync(prefs(name), { force: true })
  rmSync(`${prefs('opencode.json')}.away`, { force: true })
})

describe('preferencesChecks', () => {
  it('opencode.json alone: ok', async () => {
    expect(await check()).toEqual({
      name: 'preferences',
      status: 'ok',
      detail: 'config/assistant/opencode.json',
    })
  })

  it('another file shadows opencode.json: a warning to merge them into opencode.json', async () => {
    copyFileSync(prefs('opencode.json'), prefs('opencode.jsonc'))
    expect(await check()).toEqual({
      name: 'preferences',
      status: 'warn',
      detail:
        'the runtime uses opencode.jsonc; opencode.json is shadowed; compose.yaml mounts config/assistant/opencode.json writable, not opencode.jsonc: in the container the runtime cannot save preferences',
      fix: 'merge the files into one named opencode.json and restart the stack',
    })
  })

  it('config.json alone: a warning naming the compose mount', async () => {
    copyFileSync(prefs('opencode.json'), prefs('config.json'))
    renameSync(prefs('opencode.json'), `${prefs('opencode.json')}.away`)
    try {
      expect(await check()).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining('and the start fails (the mounted file is missing)'),
        fix: 'rename it to opencode.json (as JSON) when you run the image, or change that mount in compose.yaml',
      })
    } finally {
      renameSync(`${prefs('opencode.json')}.away`, prefs('opencode.json'))
    }
  })

  it('no preferences file: fails', async () => {
    renameSync(prefs('opencode.json'), `${prefs('opencode.json')}.away`)
    try {
      expect(await check()).toEqual({
        name: 'preferences',
        status: 'fail',
        detail: 'no preferences file in config/assistant/',
        fix: 'run `sallyport init`',
      })
    } finally {
      renameSync(`${prefs('opencode.json')}.away`, prefs('opencode.json'))
    }
  })
})
