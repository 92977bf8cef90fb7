import { lstat, mkdir, readdir, readlink, rename, rmdir, symlink, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { CliError } from '../errors.ts'
import type { RuntimeStateDirs } from '../stack/layout.ts'

/**
 * Creates a runtime's private HOME and XDG directories (0700) and its links:
 * `XDG_CONFIG_HOME/opencode` → the user config directory (the runtime's global config dir), and
 * optionally `XDG_DATA_HOME/opencode/auth.json` → the provider credential store. Links are
 * recreated on every start (absolute targets, so a moved stack keeps working). The runtime writes
 * `auth.json` and the preferences file in place, through the links.
 */
export async function prepareRuntimeDirs(input: {
  dirs: RuntimeStateDirs
  userConfigDir: string
  authFile?: string
  cwd?: string
}): Promise<void> {
  const { dirs } = input
  for (const path of [
    dirs.root,
    dirs.home,
    dirs.xdgConfig,
    dirs.xdgData,
    dirs.xdgState,
    dirs.xdgCache,
    dirs.tmp,
  ]) {
    await mkdir(path, { recursive: true, mode: 0o700 })
  }
  if (input.cwd) await mkdir(input.cwd, { recursive: true, mode: 0o700 })
  await ensureLink(join(dirs.xdgConfig, 'opencode'), input.userConfigDir)
  if (input.authFile) {
    await mkdir(join(dirs.xdgData, 'opencode'), { recursive: true, mode: 0o700 })
    await ensureLink(join(dirs.xdgData, 'opencode', 'auth.json'), input.authFile)
  }
}

async function ensureLink(path: string, target: string): Promise<void> {
  let info: Awaited<ReturnType<typeof lstat>> | undefined
  try {
    info = await lstat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  if (info?.isDirectory() && (await readdir(path)).length === 0) {
    // An empty directory holds nothing to lose: the runtime binary creates one there when it is
    // started without the link (an older `doctor` did). Replaced by the link.
    await rmdir(path)
    info = undefined
  }
  if (info && !info.isSymbolicLink()) {
    throw new CliError(
      'ERR_CLI_IO',
      `${path} should be a link to ${target} but is a real ${info.isDirectory() ? 'directory' : 'file'}: move its contents there and delete it`,
    )
  }
  if (info && (await readlink(path)) === target) return
  // Replace atomically: a new link under a temporary name, renamed over the old one.
  const temp = join(dirname(path), `.link-${process.pid}-${Date.now()}`)
  await symlink(target, temp)
  try {
    await rename(temp, path)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}
