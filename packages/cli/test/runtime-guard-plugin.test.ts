import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bundledPluginPath, pluginWrapperSource } from '@sallyport/runtime-guard'
import { afterEach, describe, expect, it } from 'vitest'
import { initStack } from '../src/commands/init.ts'
import { stackLayout } from '../src/stack/layout.ts'
import {
  ensureRuntimeGuard,
  inspectRuntimeGuard,
  runtimeGuardWrapperPath,
} from '../src/stack/runtime-guard-plugin.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    chmodSync(join(dir, 'system/assistant'), 0o755)
    chmodSync(join(dir, 'system/assistant/plugins'), 0o755)
    rmSync(dir, { recursive: true, force: true })
  }
})

async function stack() {
  const dir = await mkdtemp(join(tmpdir(), 'sallyport-guard-plugin-'))
  dirs.push(dir)
  await initStack({ dir, env: {} })
  return stackLayout(dir)
}

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8)

describe('the runtime guard plugin of a stack', () => {
  it('init installs it, and up finds it as it is', async () => {
    const layout = await stack()
    expect(await inspectRuntimeGuard(layout)).toEqual({ ok: true, module: bundledPluginPath() })
    expect(await ensureRuntimeGuard(layout)).toBe(bundledPluginPath())
  })

  it.each([
    ['missing', (path: string) => rmSync(path)],
    ['changed', (path: string) => writeFileSync(path, 'export const Nothing = async () => ({})\n')],
  ])('up restores a %s wrapper and keeps the directories read-only', async (_name, spoil) => {
    const layout = await stack()
    const path = runtimeGuardWrapperPath(layout)
    chmodSync(join(layout.managedDir, 'plugins'), 0o755)
    chmodSync(path, 0o644)
    spoil(path)
    chmodSync(join(layout.managedDir, 'plugins'), 0o555)
    expect(await inspectRuntimeGuard(layout)).toMatchObject({ ok: false, problem: 'wrapper' })
    expect(await ensureRuntimeGuard(layout)).toBe(bundledPluginPath())
    expect(readFileSync(path, 'utf8')).toBe(pluginWrapperSource())
    expect(mode(path)).toBe('444')
    expect(mode(join(layout.managedDir, 'plugins'))).toBe('555')
    expect(mode(layout.managedDir)).toBe('555')
  })

  it('up refuses to start when the wrapper cannot be restored (fail closed)', async () => {
    const layout = await stack()
    const plugins = join(layout.managedDir, 'plugins')
    chmodSync(plugins, 0o755)
    rmSync(runtimeGuardWrapperPath(layout))
    // A file where the plugins directory must be: nothing can be written below it.
    rmSync(plugins, { recursive: true })
    writeFileSync(plugins, 'not a directory')
    await expect(ensureRuntimeGuard(layout)).rejects.toMatchObject({
      code: 'ERR_CLI_START_FAILED',
      message: expect.stringMatching(
        /system\/assistant\/plugins\/sallyport-runtime-guard\.js is missing and could not be restored/,
      ),
    })
    rmSync(plugins)
    mkdirSync(plugins) // for afterEach's chmod
  })
})
