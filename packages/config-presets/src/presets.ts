import type { UpstreamClient } from '@sallyport/upstream-client'
import { PresetError } from './errors.js'
import { checkBaseUrl, checkModelId, checkPresetId, checkPresetName } from './validate.js'

// Presets for local and custom OpenAI-compatible servers, kept by the agent runtime itself: each
// change is one narrow `PATCH /global/config` (the runtime edits its preferences file in place and
// reloads), an API key goes through `PUT /auth/<id>` into the runtime's credential store, and the
// effective `GET /config` is read back afterwards. Nothing here writes a file, restarts a process
// or writes back a copy of the configuration read earlier. The operator policy file outranks the
// preferences; a conflict with it is reported, never worked around.

/** The runtime operations presets use (an `UpstreamClient` has them). */
export type PresetRuntime = Pick<
  UpstreamClient,
  'getGlobalConfig' | 'patchGlobalConfig' | 'getConfig' | 'setAuth' | 'removeAuth'
>

/** The operator policy file (higher priority than the preferences), as read by the caller. */
export interface OperatorPolicy {
  /** Its path as the operator knows it (for messages), e.g. `config/opencode/opencode.json`. */
  readonly file: string
  readonly config: Readonly<Record<string, unknown>>
}

/** What reading the effective configuration back showed. */
export type Confirmation =
  /** The effective configuration has the change. */
  | { readonly status: 'confirmed' }
  /** Saved, but the effective configuration could not be read or does not show it (yet). */
  | { readonly status: 'unconfirmed'; readonly reason: string }
  /** Saved, but a higher-priority configuration decides otherwise. */
  | { readonly status: 'overridden'; readonly reason: string }

/** A preset to save: a server and one of its models. */
export interface PresetInput {
  readonly id: string
  /** Display name of the server. */
  readonly name: string
  /** The server's OpenAI-compatible base URL (commonly ending in `/v1`). */
  readonly baseUrl: string
  /** The model id as the server names it. */
  readonly model: string
  /** Display name of the model (default: its id). */
  readonly modelName?: string
  /** An API key for the server, stored in the runtime's credential store (never in the preferences). */
  readonly key?: string
}

export interface SaveResult {
  /** The id was in `disabled_providers` of the preferences and is not any more. */
  readonly reenabled: boolean
  /** The id was added to the `enabled_providers` allow-list of the preferences. */
  readonly allowed: boolean
  readonly keyStored: boolean
  readonly confirmation: Confirmation
}

export interface Presets {
  /** Stores (or updates) a preset and re-enables it when it was disabled; stores its key when given. */
  save(input: PresetInput): Promise<SaveResult>
  /** Makes `<id>/<model>` the runtime's default model. Refused when the operator policy pins another model. */
  use(id: string, model: string): Promise<{ readonly model: string; readonly confirmation: Confirmation }>
  /** Disables a preset (`disabled_providers`), keeping its definition and its key. */
  disable(id: string): Promise<{ readonly alreadyDisabled: boolean; readonly confirmation: Confirmation }>
  /** Removes a preset's key from the runtime's credential store, keeping its definition. */
  signout(id: string): Promise<{ readonly removed: boolean }>
}

/** The package the runtime loads for an OpenAI-compatible server (bundled in the runtime). */
export const OPENAI_COMPATIBLE_PACKAGE = '@ai-sdk/openai-compatible'

const MAX_KEY_LENGTH = 4096

export function createPresets(options: { runtime: PresetRuntime; policy?: OperatorPolicy }): Presets {
  const { runtime, policy } = options

  async function preferences(): Promise<Record<string, unknown>> {
    try {
      return (await runtime.getGlobalConfig()) as Record<string, unknown>
    } catch (cause) {
      throw runtimeError('read the preferences', cause)
    }
  }

  /** The effective configuration, or the reason it could not be read. */
  async function effective(): Promise<Record<string, unknown> | string> {
    try {
      return (await runtime.getConfig()) as Record<string, unknown>
    } catch (cause) {
      return `the effective configuration could not be read back (${describeCause(cause)})`
    }
  }

  async function patch(body: Record<string, unknown>, what: string): Promise<void> {
    try {
      await runtime.patchGlobalConfig(body)
    } catch (cause) {
      throw runtimeError(what, cause)
    }
  }

  return {
    async save(input) {
      const id = checkPresetId(input.id)
      const name = checkPresetName(input.name)
      const baseUrl = checkBaseUrl(input.baseUrl)
      const model = checkModelId(input.model)
      const modelName = input.modelName === undefined ? model : checkPresetName(input.modelName)
      if (input.key !== undefined) checkKey(input.key)
      const current = await preferences()
      const disabled = stringArray(current.disabled_providers)
      const reenabled = disabled.includes(id)
      // An allow-list in the preferences gets this id (the others stay); one in the operator
      // policy is reported below, never edited.
      const enabled = Array.isArray(current.enabled_providers)
        ? stringArray(current.enabled_providers)
        : undefined
      const allow = enabled !== undefined && !enabled.includes(id)
      await patch(
        {
          provider: {
            [id]: {
              name,
              npm: OPENAI_COMPATIBLE_PACKAGE,
              options: { baseURL: baseUrl },
              models: { [model]: { name: modelName } },
            },
          },
          // Only this id leaves the list; the others stay as they are.
          ...(reenabled ? { disabled_providers: disabled.filter((other) => other !== id) } : {}),
          ...(allow ? { enabled_providers: [...(enabled ?? []), id] } : {}),
        },
        `save preset ${id}`,
      )
      let keyStored = false
      if (input.key !== undefined) {
        try {
          keyStored = await runtime.setAuth(id, { type: 'api', key: input.key })
        } catch (cause) {
          throw runtimeError(`store the key of preset ${id} (its settings are saved)`, cause)
        }
      }
      const config = await effective()
      return {
        reenabled,
        allowed: allow,
        keyStored,
        confirmation: confirmSaved(config, id, baseUrl, model, policy),
      }
    },

    async use(id, model) {
      checkPresetId(id)
      checkModelId(model)
      const qualified = `${id}/${model}`
      const pinned = policy?.config.model
      if (typeof pinned === 'string' && pinned !== qualified)
        throw new PresetError(
          'ERR_PRESET_POLICY',
          `the operator policy file ${policy?.file} sets the model to ${pinned}, which outranks the preferences: change it there`,
        )
      const blocked = policy && disablesProvider(policy.config, id)
      if (blocked)
        throw new PresetError(
          'ERR_PRESET_POLICY',
          `the operator policy file ${policy.file} ${blocked}, which outranks the preferences: change it there`,
        )
      if (!isRecord(record((await preferences()).provider)[id]))
        throw new PresetError('ERR_PRESET_NOT_FOUND', `no preset ${id}: save it first`)
      await patch({ model: qualified }, `make ${qualified} the default model`)
      const config = await effective()
      if (typeof config === 'string')
        return { model: qualified, confirmation: { status: 'unconfirmed', reason: config } }
      const now = config.model
      const disabledBy = disablesProvider(config, id)
      const confirmation: Confirmation =
        now !== qualified
          ? {
              status: 'overridden',
              reason: `the effective model is ${typeof now === 'string' ? now : 'not set'}: a configuration of higher priority than the preferences sets it`,
            }
          : disabledBy
            ? {
                status: 'overridden',
                reason: `the effective configuration ${disabledBy}: the model cannot be used`,
              }
            : { status: 'confirmed' }
      return { model: qualified, confirmation }
    },

    async disable(id) {
      checkPresetId(id)
      const current = await preferences()
      if (!isRecord(record(current.provider)[id]))
        throw new PresetError('ERR_PRESET_NOT_FOUND', `no preset ${id}`)
      const disabled = stringArray(current.disabled_providers)
      const alreadyDisabled = disabled.includes(id)
      if (!alreadyDisabled) await patch({ disabled_providers: [...disabled, id] }, `disable preset ${id}`)
      const config = await effective()
      const confirmation: Confirmation =
        typeof config === 'string'
          ? { status: 'unconfirmed', reason: config }
          : stringArray(config.disabled_providers).includes(id)
            ? { status: 'confirmed' }
            : { status: 'unconfirmed', reason: `the effective configuration does not list ${id} as disabled` }
      return { alreadyDisabled, confirmation }
    },

    async signout(id) {
      checkPresetId(id)
      try {
        return { removed: await runtime.removeAuth(id) }
      } catch (cause) {
        throw runtimeError(`remove the key of preset ${id}`, cause)
      }
    },
  }
}

/** What the effective configuration says about a saved preset. */
function confirmSaved(
  config: Record<string, unknown> | string,
  id: string,
  baseUrl: string,
  model: string,
  policy: OperatorPolicy | undefined,
): Confirmation {
  const policyDisables = policy && disablesProvider(policy.config, id)
  if (policyDisables)
    return {
      status: 'overridden',
      reason: `the operator policy file ${policy.file} ${policyDisables}, which outranks the preferences: the preset cannot be used until it is changed there`,
    }
  if (typeof config === 'string') return { status: 'unconfirmed', reason: config }
  const provider = record(record(config.provider)[id])
  if (record(provider.options).baseURL !== baseUrl || !isRecord(record(provider.models)[model]))
    return {
      status: 'unconfirmed',
      reason: `the effective configuration does not show preset ${id} as saved`,
    }
  const disabledBy = disablesProvider(config, id)
  if (disabledBy)
    return {
      status: 'overridden',
      reason: `the effective configuration ${disabledBy}: a configuration of higher priority than the preferences decides it`,
    }
  return { status: 'confirmed' }
}

/** How a configuration keeps provider `id` from being used, or undefined. */
function disablesProvider(config: Readonly<Record<string, unknown>>, id: string): string | undefined {
  if (stringArray(config.disabled_providers).includes(id)) return `disables provider ${id}`
  const enabled = config.enabled_providers
  if (Array.isArray(enabled) && !enabled.includes(id)) return `enables only the providers it lists, not ${id}`
  return undefined
}

function checkKey(key: string): void {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || /[\s\p{Cc}]/u.test(key))
    throw new PresetError(
      'ERR_PRESET_INVALID_KEY',
      `invalid API key: 1 to ${MAX_KEY_LENGTH} characters without blanks or line breaks`,
    )
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const record = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {})
const stringArray = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : []

function describeCause(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code
  return typeof code === 'string' ? code : cause instanceof Error ? cause.name : 'unknown error'
}

function runtimeError(what: string, cause: unknown): PresetError {
  return new PresetError(
    'ERR_PRESET_RUNTIME',
    `could not ${what}: the runtime answered ${describeCause(cause)}`,
    {
      cause,
    },
  )
}
