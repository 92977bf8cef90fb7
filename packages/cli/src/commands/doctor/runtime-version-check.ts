import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildRuntimeBaseEnv } from '@sallyport/runtime-process'
import { findBinary } from '../../runtime/runtime-errors.ts'
import { runtimeDirs, type StackLayout } from '../../stack/layout.ts'
import { RUNTIME_VERSION } from '../../stack/managed-files.ts'
import type { StackConfig } from '../../stack/stack-config.ts'
import { type Check, check } from './check.ts'

/**
 * `runtime`: the opencode binary is found and reports the pinned version. It runs with the
 * assistant runtime's flags and config layers but a throw-away HOME and XDG directories: the
 * binary creates directories there on every start, and doctor must change nothing in the stack
 * (a real `xdg-config/opencode` directory where `up` puts a link made the first `up` after a
 * `doctor` refuse to start) nor in the operator's home.
 */
export function runtimeVersionChecks(
  layout: StackLayout,
  config: StackConfig | undefined,
  env: NodeJS.ProcessEnv,
): Check[] {
  const found = findBinary(env)
  if (!found.ok) return [check('runtime', 'fail', found.message, 'reinstall sallyport')]
  const scratch = mkdtempSync(join(tmpdir(), 'sallyport-doctor-'))
  let result: ReturnType<typeof spawnSync>
  try {
    result = spawnSync(found.path, ['--version'], {
      encoding: 'utf8',
      timeout: 20_000,
      cwd: scratch,
      env: buildRuntimeBaseEnv({
        dirs: runtimeDirs(scratch),
        configDir: layout.managedDir,
        managedConfigDir: layout.policyDir,
        timezone: config?.assistant.timezone ?? 'UTC',
        parent: env,
      }),
    })
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  const version = String(result.stdout ?? '').trim()
  if (result.status !== 0 || !version)
    return [check('runtime', 'fail', 'the opencode binary did not report a version', 'reinstall sallyport')]
  if (version !== RUNTIME_VERSION) {
    return [
      check(
        'runtime',
        'fail',
        `opencode ${version}, expected the pinned ${RUNTIME_VERSION}`,
        'unset SALLYPORT_OPENCODE_BIN or reinstall',
      ),
    ]
  }
  return [check('runtime', 'ok', `opencode ${version} (pinned)`)]
}
