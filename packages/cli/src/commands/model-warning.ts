import { createUpstreamClient, type UpstreamClient } from '@sallyport/upstream-client'
import type { Logger } from 'pino'

// The warning `up` and `serve` print at start when the assistant runtime has no model provider
// configured: the runtime then falls back to a network default of its own (OpenCode's free
// `opencode/big-pickle`), which a machine without internet access cannot reach — and the runtime
// retries such a request without end, so jobs stay `running` with nothing else to say why.
// Asked of the running runtime (its merged configuration), not read from files: the operator
// policy, the managed directory and the preferences all take part in what is in force.

/** What the warning says, and how to fix it. */
export interface ModelWarning {
  readonly message: string
  readonly fix: string
  /** `provider/model` the runtime falls back to, when it said. */
  readonly fallback?: string
}

const FIX =
  'configure a model provider: `sallyport preset save <id> --name … --base-url … --model … --key-stdin` then `sallyport preset use <id> <model>` (a local or OpenAI-compatible server), or set `model` and its provider in config/assistant/opencode.json; `sallyport doctor` then checks that the model answers'

/**
 * A warning when the runtime's configuration names no model (the runtime falls back to its own
 * default), or names one whose provider the runtime does not have; undefined when a model is
 * configured and its provider is known, or when the runtime cannot be asked (no warning is
 * better than a wrong one: `doctor` checks the model for real).
 */
export async function modelWarning(
  runtime: Pick<UpstreamClient, 'getConfig' | 'configuredProviders'>,
  options: { timeoutMs?: number } = {},
): Promise<ModelWarning | undefined> {
  const call = { timeoutMs: options.timeoutMs ?? 5_000 }
  let model: unknown
  // `connected`: the providers the runtime can use (configured, or needing no credentials);
  // `default`: each provider's default model. From `GET /config/providers` (kilobytes), not
  // `GET /provider`, whose whole catalog (6.4 MB with no provider configured) left the process
  // about 20 MiB larger for good after this one call at start.
  let connected: readonly string[]
  let defaults: Record<string, string>
  try {
    model = (await runtime.getConfig(call)).model
    const list = await runtime.configuredProviders(call)
    connected = list.providers.map((p) => p.id)
    defaults = list.default
  } catch {
    return undefined
  }
  if (typeof model === 'string' && model.includes('/')) {
    const provider = model.slice(0, model.indexOf('/'))
    if (connected.includes(provider)) return undefined
    return {
      message: `the configured model ${model} names provider ${provider}, which the assistant runtime does not have (not configured, disabled, or without credentials): jobs will fail`,
      fix: FIX,
    }
  }
  const only = connected.length === 1 ? connected[0] : undefined
  const fallback = only !== undefined && defaults[only] ? `${only}/${defaults[only]}` : undefined
  return {
    message: `no model provider is configured: the assistant runtime falls back to ${
      fallback ?? 'a default of its own'
    }${
      only === 'opencode' ? ", OpenCode's hosted free model, which needs internet access to opencode.ai" : ''
    }; where it cannot be reached, jobs stay running while the runtime retries (job.get shows the retry and the provider's error)`,
    fix: FIX,
    ...(fallback !== undefined && { fallback }),
  }
}

/** Where the assistant runtime is, to ask it (`up` and `serve` know it at start). */
export interface RuntimeAddress {
  readonly baseUrl: string
  readonly username: string
  readonly password: string
  readonly directory: string
}

/**
 * Asks the running runtime ({@link modelWarning}) and logs the warning, if any, as
 * `model_unconfigured`. Never throws: a runtime that cannot be asked gets no warning.
 */
export async function warnIfNoModel(
  logger: Pick<Logger, 'warn'>,
  runtime: RuntimeAddress,
): Promise<ModelWarning | undefined> {
  const client = createUpstreamClient(runtime)
  try {
    const warning = await modelWarning(client)
    if (warning)
      logger.warn(
        {
          event: 'model_unconfigured',
          ...(warning.fallback !== undefined && { fallback: warning.fallback }),
          fix: warning.fix,
        },
        warning.message,
      )
    return warning
  } finally {
    client.close()
  }
}
