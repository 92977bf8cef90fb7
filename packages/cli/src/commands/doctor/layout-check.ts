import { join } from 'node:path'
import { relativeToStack, type StackLayout } from '../../stack/layout.ts'
import { type Check, check, kindOf } from './check.ts'

/**
 * `layout`: every directory and file `init` creates is there (a missing one names what to run).
 * Adds an `ok` note when `knowledge/env/user.env` exists: it is never loaded into a runtime.
 */
export async function layoutChecks(layout: StackLayout): Promise<Check[]> {
  const dirs = [
    layout.stateDir,
    layout.credentialsDir,
    layout.managedDir,
    layout.moderatorDir,
    layout.policyDir,
    layout.userConfigDir,
    layout.akmDir,
    layout.secretsDir,
    layout.tasksDir,
    layout.disabledTasksDir,
    layout.workspace,
  ]
  const files = [
    layout.handleSecret,
    layout.nativePassword,
    layout.moderatorPassword,
    layout.ownerKeyFile,
    join(layout.managedDir, 'opencode.json'),
    join(layout.moderatorDir, 'opencode.json'),
    layout.policyFile,
    layout.akmConfig,
    layout.authFile,
  ]
  const missing: string[] = []
  for (const path of dirs)
    if ((await kindOf(path)) !== 'dir') missing.push(`${relativeToStack(layout, path)}/`)
  for (const path of files) if ((await kindOf(path)) !== 'file') missing.push(relativeToStack(layout, path))
  const out: Check[] = [
    missing.length === 0
      ? check('layout', 'ok', 'every directory and file of the stack is present')
      : check(
          'layout',
          'fail',
          `missing: ${missing.join(', ')}`,
          `run \`sallyport init --dir ${layout.root}\` (it only adds what is missing)`,
        ),
  ]
  if ((await kindOf(layout.userEnvFile)) !== undefined) {
    out.push(
      check('user.env', 'ok', 'knowledge/env/user.env exists; it is never loaded into a runtime environment'),
    )
  }
  return out
}
