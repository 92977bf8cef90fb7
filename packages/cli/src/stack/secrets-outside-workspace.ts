import { realpath } from 'node:fs/promises'
import { basename, dirname, join, relative, sep } from 'node:path'
import { CliError } from '../errors.ts'
import { relativeToStack, type StackLayout } from './layout.ts'

/** The real path of `path`; for a path that does not exist yet, its nearest existing ancestor's. */
async function realOf(path: string): Promise<string> {
  try {
    return await realpath(path)
  } catch {
    const parent = dirname(path)
    if (parent === path) return path
    return join(await realOf(parent), basename(path))
  }
}

/** True when `inner` is `outer` or lies below it (both real, absolute paths). */
function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep))
}

/**
 * Why the workspace would expose the stack's secrets, or `undefined` when it does not. The
 * workspace is readable by `read`/`full` credentials (gateway.workspace.read), so it must not
 * equal, contain or lie inside `state/` (credential keys, handle secret, passwords, runtime
 * homes) or `knowledge/secrets/`, nor contain any single secret file. Real paths are compared,
 * so a symbolic link does not hide an overlap.
 */
export async function secretsInWorkspace(layout: StackLayout): Promise<string | undefined> {
  const workspace = await realOf(layout.workspace)
  const secretDirs = [layout.stateDir, layout.credentialsDir, layout.secretsDir]
  const secretFiles = [
    layout.handleSecret,
    layout.nativePassword,
    layout.moderatorPassword,
    layout.stackEnv,
    layout.ownerKeyFile,
    layout.authFile,
  ]
  for (const path of [...secretDirs, ...secretFiles]) {
    const real = await realOf(path)
    const exposed = within(real, workspace)
    const inside = secretDirs.includes(path) && within(workspace, real)
    if (exposed || inside) {
      const shown = relativeToStack(layout, path)
      const how = real === workspace ? 'is' : exposed ? 'contains' : 'lies inside'
      return `the workspace ${layout.workspace} ${how} ${shown}`
    }
  }
  return undefined
}

/**
 * Refuses (`ERR_CLI_CONFIG_INVALID`, exit 3) a workspace that would put the stack's secrets in
 * reach of gateway.workspace.read. `up`, `serve` and `doctor` all use this one check.
 */
export async function assertSecretsOutsideWorkspace(layout: StackLayout): Promise<void> {
  const problem = await secretsInWorkspace(layout)
  if (problem === undefined) return
  throw new CliError(
    'ERR_CLI_CONFIG_INVALID',
    `${problem}: credential keys and secrets would be readable through the gateway; choose a workspace outside state/ and knowledge/secrets/ (--workspace or SALLYPORT_WORKSPACE)`,
  )
}
