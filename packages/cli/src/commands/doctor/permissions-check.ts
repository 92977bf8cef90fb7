import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { relativeToStack, type StackLayout } from '../../stack/layout.ts'
import { type Check, check } from './check.ts'

/**
 * `permissions`: secret files (handle secret, passwords, stack.env, provider credentials, every
 * credential key) and the private directories are closed to group and others. Absent files are
 * left to the layout check.
 */
export async function permissionsChecks(layout: StackLayout): Promise<Check[]> {
  const secretFiles = [
    layout.handleSecret,
    layout.nativePassword,
    layout.moderatorPassword,
    layout.stackEnv,
    layout.authFile,
  ]
  try {
    for (const name of await readdir(layout.credentialsDir, { withFileTypes: true })) {
      if (name.isDirectory()) secretFiles.push(join(layout.credentialsDir, name.name, 'key'))
    }
  } catch {
    // reported by the layout check
  }
  const privateDirs = [layout.stateDir, layout.credentialsDir, layout.knowledgeDir, layout.secretsDir]
  const loose: string[] = []
  for (const path of [...secretFiles, ...privateDirs]) {
    try {
      const info = await lstat(path)
      if ((info.mode & 0o077) !== 0)
        loose.push(`${relativeToStack(layout, path)} (${(info.mode & 0o777).toString(8)})`)
    } catch {
      // absent files are reported by the layout check
    }
  }
  return [
    loose.length === 0
      ? check('permissions', 'ok', 'secret files are 0600 and state directories 0700')
      : check(
          'permissions',
          'fail',
          `readable by group or others: ${loose.join(', ')}`,
          'chmod 600 those files and chmod 700 those directories',
        ),
  ]
}
