import type { StackLayout } from '../../stack/layout.ts'
import { secretsInWorkspace } from '../../stack/secrets-outside-workspace.ts'
import { type Check, check } from './check.ts'

/**
 * `secrets outside workspace`: a failure when the workspace would put `state/` or
 * `knowledge/secrets/` in reach of gateway.workspace.read (the same test `up` and `serve` refuse
 * to start on); nothing when it does not.
 */
export async function secretsOutsideWorkspaceChecks(layout: StackLayout): Promise<Check[]> {
  const inWorkspace = await secretsInWorkspace(layout)
  if (inWorkspace === undefined) return []
  return [
    check(
      'secrets outside workspace',
      'fail',
      `${inWorkspace}: state/ or knowledge/secrets/ would be readable through the gateway`,
      'choose a workspace outside state/ and knowledge/secrets/ (SALLYPORT_WORKSPACE); `up` and `serve` refuse to start',
    ),
  ]
}
