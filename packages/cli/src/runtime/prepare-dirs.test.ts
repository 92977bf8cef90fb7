import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runtimeDirs } from '../stack/layout.ts'
import { prepareRuntimeDirs } from './prepare-dirs.ts'

const temps: string[] = []
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true })
})

function fresh(): { dirs: ReturnType<typeof runtimeDirs>; userConfig: string } {
  const root = mkdtempSync(join(tmpdir(), 'sallyport-prepare-'))
  temps.push(root)
  const userConfig = join(root, 'config-assistant')
  mkdirSync(userConfig)
  return { dirs: runtimeDirs(join(root, 'state')), userConfig }
}

describe('prepareRuntimeDirs', () => {
  it('links XDG_CONFIG_HOME/opencode to the user config directory', async () => {
    const { dirs, userConfig } = fresh()
    await prepareRuntimeDirs({ dirs, userConfigDir: userConfig })
    expect(readlinkSync(join(dirs.xdgConfig, 'opencode'))).toBe(userConfig)
    expect(lstatSync(dirs.home).mode & 0o777).toBe(0o700)
  })

  it('replaces an EMPTY real directory the runtime binary left where the link goes', async () => {
    const { dirs, userConfig } = fresh()
    mkdirSync(join(dirs.xdgConfig, 'opencode'), { recursive: true })
    await prepareRuntimeDirs({ dirs, userConfigDir: userConfig })
    expect(readlinkSync(join(dirs.xdgConfig, 'opencode'))).toBe(userConfig)
  })

  it('refuses a real directory with content in it (it would be lost), saying what to do', async () => {
    const { dirs, userConfig } = fresh()
    mkdirSync(join(dirs.xdgConfig, 'opencode'), { recursive: true })
    writeFileSync(join(dirs.xdgConfig, 'opencode', 'opencode.json'), '{}')
    await expect(prepareRuntimeDirs({ dirs, userConfigDir: userConfig })).rejects.toThrow(
      /should be a link .* but is a real directory: move its contents there and delete it/,
    )
  })
})
