import type { StackLayout } from '../../stack/layout.ts'
import { inspectRuntimeGuard } from '../../stack/runtime-guard-plugin.ts'
import { type Check, check } from './check.ts'

/**
 * `runtime guard`: the assistant runtime will load the workspace guard for remote agents. A
 * missing bundled module fails (reinstall); a missing or changed wrapper warns (`up` restores it).
 */
export async function runtimeGuardChecks(layout: StackLayout): Promise<Check[]> {
  const state = await inspectRuntimeGuard(layout)
  if (state.ok)
    return [check('runtime guard', 'ok', 'the assistant runtime loads the workspace guard for remote agents')]
  return [
    state.problem === 'module'
      ? check('runtime guard', 'fail', state.detail, 'reinstall sallyport')
      : check('runtime guard', 'warn', state.detail, '`sallyport up` restores it (or run `sallyport init`)'),
  ]
}
