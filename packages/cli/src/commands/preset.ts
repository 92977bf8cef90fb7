import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import type { Confirmation, checkReadiness, OperatorPolicy, Presets } from '@sallyport/config-presets'
import { PresetError } from '@sallyport/config-presets/errors'
import { createUpstreamClient } from '@sallyport/upstream-client'
import { CliError } from '../errors.ts'
import type { Io } from '../io.ts'
import { overridesFromEnv } from '../stack/layout.ts'
import { PREFERENCES_FILES } from '../stack/managed-files.ts'
import { requireStack } from '../stack/require-stack.ts'
import { readPasswordFile } from '../stack/secrets.ts'
import { loadStackConfig } from '../stack/stack-config.ts'
import { readStackEnv } from '../stack/stack-env.ts'
import { resolveStackPlan } from '../stack/stack-plan.ts'

// `sallyport preset …`: presets for local and custom OpenAI-compatible servers, kept by the
// running assistant runtime through its native API (@sallyport/config-presets). Nothing here
// writes a file of the stack or restarts a process; the runtime reloads its configuration itself.
// The package's root is loaded when a preset command runs, not with the CLI (`presetsPackage`).

/** `@sallyport/config-presets` (the presets, the model listing, the readiness check), on demand. */
const presetsPackage = () => import('@sallyport/config-presets')

/** Options shared by every `preset` command. */
export interface PresetCommandOptions {
  readonly dir: string
  readonly json?: boolean
}

/** A native reload ends the turns running in the runtime: said after every change. */
const RELOAD_NOTE =
  'The runtime reloads its configuration for this change; a reload can interrupt work that is running in it.\n'

/** The presets of the stack's running assistant runtime, and what operator messages need. */
interface Connection {
  readonly presets: Presets
  readonly runtime: ReturnType<typeof createUpstreamClient>
  readonly inContainer: boolean
  /** The preferences the runtime keeps (`GET /global/config`). */
  preferences(): Promise<Record<string, unknown>>
  close(): void
}

/**
 * Refuses a change the runtime would make at the cost of the operator's comments: it rewrites
 * `opencode.json` (and `config.json`) as plain JSON and keeps comments only in `opencode.jsonc`
 * (docs/runtime-config-writes.md).
 */
async function guardComments(userConfigDir: string): Promise<void> {
  for (const name of PREFERENCES_FILES) {
    let text: string
    try {
      text = await readFile(join(userConfigDir, name), 'utf8')
    } catch {
      continue
    }
    if (name === 'opencode.jsonc') return
    try {
      JSON.parse(text)
    } catch {
      throw new CliError(
        'ERR_CLI_CONFIG_INVALID',
        `config/assistant/${name} is not plain JSON (comments?): the runtime rewrites that file as plain JSON and would drop them. Rename it to opencode.jsonc, where the runtime keeps comments (in the container, mount that name in compose.yaml), or remove the comments`,
      )
    }
    return
  }
}

async function connect(dir: string, io: Io, writes = true): Promise<Connection> {
  const layout = await requireStack(dir, overridesFromEnv(io.env))
  if (writes) await guardComments(layout.userConfigDir)
  const config = await loadStackConfig(layout.configFile)
  const plan = resolveStackPlan({ layout, config, env: io.env, recorded: await readStackEnv(layout) })
  const { nativeUrl, nativePasswordFile, nativeUsername } = plan.gateway
  if (!nativeUrl)
    throw new CliError(
      'ERR_CLI_USAGE',
      'the assistant runtime has not been started: run `sallyport up` (presets are kept by the running runtime)',
    )
  const password = await readPasswordFile(nativePasswordFile.path, nativePasswordFile.shownAs)
  const runtime = createUpstreamClient({
    baseUrl: nativeUrl,
    username: nativeUsername,
    password,
    directory: layout.workspace,
  })
  const policy = await readPolicy(
    layout.policyFile,
    relative(layout.root, layout.policyFile) || layout.policyFile,
  )
  return {
    presets: (await presetsPackage()).createPresets({ runtime, ...(policy ? { policy } : {}) }),
    runtime,
    inContainer: io.env.SALLYPORT_IMAGE === '1',
    preferences: async () => (await runtime.getGlobalConfig()) as Record<string, unknown>,
    close: () => runtime.close(),
  }
}

/** The operator policy file, when there is one (it is plain JSON, read-only to the runtime). */
async function readPolicy(path: string, shownAs: string): Promise<OperatorPolicy | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new CliError(
      'ERR_CLI_IO',
      `cannot read the operator policy file ${shownAs}: ${(error as Error).message}`,
    )
  }
  try {
    const config: unknown = JSON.parse(text)
    if (typeof config !== 'object' || config === null || Array.isArray(config))
      throw new Error('not an object')
    return { file: shownAs, config: config as Record<string, unknown> }
  } catch {
    throw new CliError(
      'ERR_CLI_CONFIG_INVALID',
      `the operator policy file ${shownAs} is not a JSON object: fix it before changing presets`,
    )
  }
}

/** Runs `run` on a connection; `writes`: the command changes the preferences (comments guarded). */
async function withPresets<T>(
  dir: string,
  io: Io,
  run: (connection: Connection) => Promise<T>,
  writes = true,
): Promise<T> {
  const connection = await connect(dir, io, writes)
  try {
    return await run(connection)
  } finally {
    connection.close()
  }
}

/** A change saved but overridden by a configuration of higher priority: exit 5, after the result is printed. */
function notInEffect(id: string, confirmation: Confirmation): void {
  if (confirmation.status === 'overridden')
    throw new PresetError(
      'ERR_PRESET_POLICY',
      `preset ${id}: saved, but not in effect: ${confirmation.reason}`,
    )
}

function describe(confirmation: Confirmation): string {
  switch (confirmation.status) {
    case 'confirmed':
      return 'confirmed by the effective configuration'
    case 'unconfirmed':
      return `saved, unconfirmed: ${confirmation.reason}`
    case 'overridden':
      return `saved, but not in effect: ${confirmation.reason}`
  }
}

/** Reads the API key from standard input: one line, nothing else. Never from arguments or the environment. */
export async function readKeyFromStdin(stdin: AsyncIterable<Buffer | string>): Promise<string> {
  let text = ''
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
    if (text.length > 8192) throw new CliError('ERR_CLI_USAGE', 'the key on standard input is too long')
  }
  const key = text.replace(/\r?\n$/, '')
  if (key.length === 0) throw new CliError('ERR_CLI_USAGE', '--key-stdin: standard input held no key')
  return key
}

export interface PresetSaveOptions extends PresetCommandOptions {
  readonly id: string
  readonly name: string
  readonly baseUrl: string
  readonly model: string
  readonly modelName?: string | undefined
  /** The API key, read from standard input by the caller (`--key-stdin`). */
  readonly key?: string | undefined
}

/** `sallyport preset save <id> --name … --base-url … --model … [--key-stdin]`. */
export async function presetSave(options: PresetSaveOptions, io: Io): Promise<void> {
  await withPresets(options.dir, io, async ({ presets, inContainer }) => {
    const result = await presets.save({
      id: options.id,
      name: options.name,
      baseUrl: options.baseUrl,
      model: options.model,
      ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
      ...(options.key !== undefined ? { key: options.key } : {}),
    })
    const { baseUrlAdvice } = await presetsPackage()
    const advice = baseUrlAdvice(options.baseUrl.replace(/\/+$/, ''), inContainer ? 'container' : 'host')
    if (options.json) {
      io.out(`${JSON.stringify({ id: options.id, ...result, advice })}\n`)
      notInEffect(options.id, result.confirmation)
      return
    }
    io.out(
      `preset ${options.id} saved (${describe(result.confirmation)})${result.reenabled ? '; it was disabled and is enabled again' : ''}${result.allowed ? '; added to the enabled_providers list of the preferences' : ''}${result.keyStored ? '; its key is stored in the runtime' : ''}\n`,
    )
    for (const line of advice) io.err(`note: ${line}\n`)
    io.err(RELOAD_NOTE)
    io.err(`Make it the default with: sallyport preset use ${options.id} ${options.model}\n`)
    notInEffect(options.id, result.confirmation)
  })
}

/** `sallyport preset use <id> <model>`. */
export async function presetUse(
  options: PresetCommandOptions & { id: string; model: string },
  io: Io,
): Promise<void> {
  await withPresets(options.dir, io, async ({ presets }) => {
    const result = await presets.use(options.id, options.model)
    if (options.json) io.out(`${JSON.stringify(result)}\n`)
    else {
      io.out(`default model ${result.model} (${describe(result.confirmation)})\n`)
      io.err(RELOAD_NOTE)
    }
    notInEffect(options.id, result.confirmation)
  })
}

/** `sallyport preset disable <id>`. */
export async function presetDisable(options: PresetCommandOptions & { id: string }, io: Io): Promise<void> {
  await withPresets(options.dir, io, async ({ presets }) => {
    const result = await presets.disable(options.id)
    if (options.json) io.out(`${JSON.stringify({ id: options.id, ...result })}\n`)
    else {
      io.out(
        result.alreadyDisabled
          ? `preset ${options.id} was already disabled\n`
          : `preset ${options.id} disabled (${describe(result.confirmation)}); its settings and key are kept: save it again to enable it\n`,
      )
      if (!result.alreadyDisabled) io.err(RELOAD_NOTE)
    }
  })
}

/** `sallyport preset signout <id>`. */
export async function presetSignout(options: PresetCommandOptions & { id: string }, io: Io): Promise<void> {
  await withPresets(
    options.dir,
    io,
    async ({ presets }) => {
      const result = await presets.signout(options.id)
      if (options.json) io.out(`${JSON.stringify({ id: options.id, ...result })}\n`)
      else
        io.out(
          `preset ${options.id}: key removed from the runtime's credential store; its settings are kept\n`,
        )
    },
    false,
  )
}

/**
 * `sallyport preset models <id> [--key-stdin]`: one bounded `GET <baseURL>/models` of the saved
 * preset's server, from here (beside the runtime: on the host for `up`, inside the container
 * through `docker exec`). Prints model ids only; a listing is no proof that a model answers or
 * calls tools (`preset check` is meant to prove that; not there yet).
 */
export async function presetModels(
  options: PresetCommandOptions & { id: string; key?: string | undefined },
  io: Io,
): Promise<void> {
  await withPresets(
    options.dir,
    io,
    async ({ preferences }) => {
      const provider = ((await preferences()).provider ?? {}) as Record<
        string,
        { options?: { baseURL?: unknown } }
      >
      const baseUrl = provider[options.id]?.options?.baseURL
      if (typeof baseUrl !== 'string')
        throw new PresetError(
          'ERR_PRESET_NOT_FOUND',
          `no preset ${options.id} with a base URL: save it first`,
        )
      const { listModels } = await presetsPackage()
      const listing = await listModels({
        baseUrl,
        ...(options.key !== undefined ? { key: options.key } : {}),
      })
      if (options.json) {
        io.out(`${JSON.stringify({ id: options.id, ...listing })}\n`)
        return
      }
      if (!listing.supported) {
        io.out(
          `${options.id}: the server does not list its models (${listing.reason}); use the model id its documentation gives\n`,
        )
        return
      }
      for (const model of listing.models) io.out(`${model}\n`)
      if (listing.truncated) io.err(`(the first ${listing.models.length} only)\n`)
      io.err('A listed model is not proven to answer or to call tools.\n')
    },
    false,
  )
}

/**
 * `sallyport preset check <id> [model]`: one short request through the running runtime with the
 * preset's model, in a chat session of its own that is deleted afterwards. Exit 9 when the model
 * did not answer. It proves inference only, never tool calls.
 */
export async function presetCheck(
  options: PresetCommandOptions & { id: string; model?: string | undefined },
  io: Io,
): Promise<void> {
  await withPresets(
    options.dir,
    io,
    async ({ runtime, preferences }) => {
      let model = options.model
      if (model === undefined) {
        const provider = ((await preferences()).provider ?? {}) as Record<
          string,
          { models?: Record<string, unknown> }
        >
        const models = Object.keys(provider[options.id]?.models ?? {})
        if (models.length !== 1)
          throw new CliError(
            'ERR_CLI_USAGE',
            models.length === 0
              ? `no preset ${options.id} with a model: save it first`
              : `preset ${options.id} has several models: name one (${models.slice(0, 5).join(', ')})`,
          )
        model = models[0] as string
      }
      // Ctrl-C (or a stop) ends the wait; the check still deletes its session before this returns.
      const interrupt = new AbortController()
      const stop = (): void => interrupt.abort()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      let result: Awaited<ReturnType<typeof checkReadiness>>
      try {
        const { checkReadiness } = await presetsPackage()
        result = await checkReadiness({ runtime, id: options.id, model, signal: interrupt.signal })
      } finally {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
      }
      if (options.json) io.out(`${JSON.stringify(result)}\n`)
      else
        io.out(
          result.inference === 'proven'
            ? `${result.model}: inference proven (answered through the runtime in ${(result.elapsedMs / 1000).toFixed(1)} s); tool calls not proven (the check does not exercise them)\n`
            : `${result.model}: inference failed: ${result.reason}\n`,
        )
      if (result.inference !== 'proven')
        throw new CliError('ERR_CLI_CHECK_FAILED', `preset ${options.id} is not ready: ${result.reason}`)
    },
    false,
  )
}
