import type { CheckRuntime } from '@sallyport/config-presets'
import { createUpstreamClient } from '@sallyport/upstream-client'
import { readPasswordFile } from '../../stack/secrets.ts'
import type { StackPlan } from '../../stack/stack-plan.ts'
import { type Check, check } from './check.ts'

const NAME = 'model readiness'

/** How long the check waits for the model's answer by default (a cold local model loads slowly). */
export const MODEL_READINESS_TIMEOUT_MS = 30_000

const FIX =
  'configure a model provider: `sallyport preset save <id> --name … --base-url … --model … --key-stdin` and `sallyport preset use <id> <model>` (a local or OpenAI-compatible server), or set `model` and its provider in config/assistant/opencode.json; then run `sallyport doctor` again'

export interface ModelReadinessOptions {
  /** The stack's workspace: the check's session is opened there, as every request of the stack is. */
  readonly workspace: string
  /** Give up waiting for the answer after this long (default {@link MODEL_READINESS_TIMEOUT_MS}). */
  readonly timeoutMs?: number
  /** A runtime to use instead of connecting to the stack's (tests). */
  readonly runtime?: CheckRuntime
}

/**
 * `model readiness`: one short request through the running assistant runtime with the model it
 * uses when a request names none (the readiness check of `sallyport preset check`). `ok` when the
 * model answered; `fail` with the runtime's error and the provider's message (keys, tokens and
 * host paths removed) when it did not — the first failed request the runtime starts to retry
 * counts, so an unreachable provider fails the check at once instead of after the retries.
 * A warning, not a failure, when the assistant runtime is not running (nothing to ask).
 *
 * `/health` stays about processes: a stack with an unreachable model is up, and says so here.
 */
export async function modelReadinessChecks(
  plan: Pick<StackPlan, 'gateway'>,
  earlier: readonly Check[],
  options: ModelReadinessOptions,
): Promise<Check[]> {
  const assistant = earlier.find((c) => c.name === 'assistant runtime')
  const { nativeUrl, nativeUsername, nativePasswordFile } = plan.gateway
  if (!options.runtime && (assistant?.status !== 'ok' || nativeUrl === undefined))
    return [
      check(
        NAME,
        'warn',
        'not checked: the assistant runtime is not running',
        'start the stack with `sallyport up`, then run `sallyport doctor` again',
      ),
    ]
  let runtime = options.runtime
  let close = (): void => {}
  if (!runtime) {
    let password: string
    try {
      password = await readPasswordFile(nativePasswordFile.path, nativePasswordFile.shownAs)
    } catch (error) {
      return [check(NAME, 'fail', `not checked: ${(error as Error).message}`)]
    }
    const client = createUpstreamClient({
      baseUrl: nativeUrl as string,
      username: nativeUsername,
      password,
      directory: options.workspace,
    })
    runtime = client
    close = () => client.close()
  }
  try {
    // The presets package is loaded when `doctor` runs, not with the CLI.
    const { checkReadiness } = await import('@sallyport/config-presets')
    const result = await checkReadiness({
      runtime,
      timeoutMs: options.timeoutMs ?? MODEL_READINESS_TIMEOUT_MS,
    })
    if (result.inference === 'proven')
      return [
        check(
          NAME,
          'ok',
          `${result.model} answered through the runtime in ${(result.elapsedMs / 1000).toFixed(1)} s`,
        ),
      ]
    return [check(NAME, 'fail', `${result.model} cannot answer: ${result.reason}`, FIX)]
  } catch (error) {
    return [check(NAME, 'fail', `the check could not run: ${(error as Error).message}`, FIX)]
  } finally {
    close()
  }
}
