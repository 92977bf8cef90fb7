import { CliError } from '../../errors.ts'
import type { Io } from '../../io.ts'
import { overridesFromEnv, stackLayout } from '../../stack/layout.ts'
import { readStackEnv } from '../../stack/stack-env.ts'
import { resolveStackPlan } from '../../stack/stack-plan.ts'
import type { Check } from './check.ts'
import { configChecks } from './config-check.ts'
import { configDirChecks } from './config-dirs-check.ts'
import { layoutChecks } from './layout-check.ts'
import { modelReadinessChecks } from './model-readiness-check.ts'
import { moderatorModelChecks } from './moderator-model-check.ts'
import { permissionsChecks } from './permissions-check.ts'
import { preferencesChecks } from './preferences-check.ts'
import { processChecks } from './process-checks.ts'
import { runtimeGuardChecks } from './runtime-guard-check.ts'
import { runtimeVersionChecks } from './runtime-version-check.ts'
import { schedulerChecks } from './scheduler-check.ts'
import { secretsOutsideWorkspaceChecks } from './secrets-outside-workspace-check.ts'

export type { Check } from './check.ts'

export interface DoctorOptions {
  readonly dir: string
  readonly json?: boolean
  /** Deadline of the model readiness check (default 30 s); 0 skips that check. */
  readonly modelTimeoutMs?: number
}

/**
 * `sallyport doctor`: checks layout, permissions, configuration, the runtime binary and version,
 * ports and the health of each process, and says what to fix. Changes nothing in the stack.
 * Throws `ERR_CLI_CHECK_FAILED` (exit 9) when any check fails; warnings alone pass.
 */
export async function doctor(options: DoctorOptions, io: Io): Promise<Check[]> {
  const layout = stackLayout(options.dir, overridesFromEnv(io.env))
  const { checks, config } = await configChecks(layout)
  checks.push(...(await layoutChecks(layout)))
  checks.push(...(await permissionsChecks(layout)))
  checks.push(...(await secretsOutsideWorkspaceChecks(layout)))
  checks.push(...(await configDirChecks(layout)))
  checks.push(...(await preferencesChecks(layout)))
  checks.push(...(await runtimeGuardChecks(layout)))
  checks.push(...(await moderatorModelChecks(layout, config)))
  checks.push(...runtimeVersionChecks(layout, config, io.env))
  if (config) {
    const plan = resolveStackPlan({ layout, config, env: io.env, recorded: await readStackEnv(layout) })
    checks.push(...(await processChecks(plan)))
    if (options.modelTimeoutMs !== 0)
      checks.push(
        ...(await modelReadinessChecks(plan, checks, {
          workspace: layout.workspace,
          ...(options.modelTimeoutMs !== undefined && { timeoutMs: options.modelTimeoutMs }),
        })),
      )
  }
  checks.push(...(await schedulerChecks(layout)))

  if (options.json) io.out(`${JSON.stringify({ ok: !checks.some((c) => c.status === 'fail'), checks })}\n`)
  else io.out(formatChecks(checks))
  const failed = checks.filter((c) => c.status === 'fail').length
  if (failed > 0)
    throw new CliError(
      'ERR_CLI_CHECK_FAILED',
      `${failed} problem${failed === 1 ? '' : 's'} found (see above)`,
    )
  return checks
}

/** Human-readable report: one line per check, a `fix:` line under each warning or failure. */
export function formatChecks(checks: readonly Check[]): string {
  const label = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const
  return `${checks
    .map(
      (c) =>
        `${label[c.status]}  ${c.name}: ${c.detail}${c.fix && c.status !== 'ok' ? `\n      fix: ${c.fix}` : ''}`,
    )
    .join('\n')}\n`
}
