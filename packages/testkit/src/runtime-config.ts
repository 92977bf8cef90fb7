import type { AgentProfileConfig } from '@sallyport/policy'
import { runtimeAgentProfiles } from '@sallyport/runtime-guard'

/** A JSON object (opencode config fragment). */
export type JsonObject = { [key: string]: unknown }

/** Provider id of the scripted model in the generated config (`fake`). */
export const FAKE_PROVIDER_ID = 'fake'
/** Model id of the scripted model in the generated config (`fake-1`, i.e. `fake/fake-1`). */
export const FAKE_MODEL_ID = 'fake-1'
/** Model id the model server answers as the moderator (`fake/fake-mod`): verdicts, not scripts. */
export const FAKE_MODERATION_MODEL_ID = 'fake-mod'

/**
 * The gateway's agent profiles exactly as the stack installs them (`@sallyport/runtime-guard`'s
 * `runtimeAgentProfiles`: the policy's profiles with the guard's secret-file rules, and the
 * scheduler's), plus the `guarded` test agent. Permission keys are evaluated in order with the
 * last match winning, so the wildcard comes first. Custom agents default to `question: deny`, hence the explicit allow.
 */
export const AGENT_PROFILES = {
  ...(runtimeAgentProfiles() as Record<
    'remote' | 'remote-read' | 'remote-full' | 'scheduled',
    AgentProfileConfig
  >),
  guarded: {
    mode: 'primary',
    description: 'Test agent: bash and edits ask for permission',
    permission: { bash: 'ask', edit: 'ask', question: 'allow' },
  },
} as const satisfies Record<string, { mode: string; description: string; permission: object }>

/** Agent names defined by the generated config. */
export type AgentProfileName = keyof typeof AGENT_PROFILES

/**
 * The runtime config the harness writes to `OPENCODE_CONFIG_DIR/opencode.json`: the scripted
 * provider as default and small (title) model, only that provider enabled, and the agent profiles.
 * `extra` is deep-merged on top (objects merge, everything else replaces).
 */
export function buildRuntimeConfig(modelBaseURL: string, extra: JsonObject = {}): JsonObject {
  const base: JsonObject = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: `${FAKE_PROVIDER_ID}/${FAKE_MODEL_ID}`,
    small_model: `${FAKE_PROVIDER_ID}/${FAKE_MODEL_ID}`,
    enabled_providers: [FAKE_PROVIDER_ID],
    provider: {
      [FAKE_PROVIDER_ID]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted model (testkit)',
        options: { baseURL: modelBaseURL, apiKey: 'fake-key' },
        models: {
          [FAKE_MODEL_ID]: { name: 'Fake One', tool_call: true, limit: { context: 100_000, output: 4096 } },
          [FAKE_MODERATION_MODEL_ID]: {
            name: 'Fake moderator',
            tool_call: false,
            limit: { context: 100_000, output: 256 },
          },
        },
      },
    },
    agent: structuredClone(AGENT_PROFILES),
  }
  return deepMerge(base, extra)
}

/** Deep merge of plain objects; arrays and scalars from `patch` replace. Inputs are not mutated. */
export function deepMerge(target: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...target }
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key]
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value
  }
  return out
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * What an operator's preferences file (`config/assistant/opencode.json` of a stack) holds to use
 * the scripted model for everything: the assistant's model and small model, and the moderator's
 * model. Merge it into the existing preferences.
 */
export function scriptedModelPreferences(baseURL: string): JsonObject {
  const model = `${FAKE_PROVIDER_ID}/${FAKE_MODEL_ID}`
  return {
    model,
    small_model: model,
    enabled_providers: [FAKE_PROVIDER_ID],
    provider: {
      [FAKE_PROVIDER_ID]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted model (testkit)',
        options: { baseURL, apiKey: 'fake-key' },
        models: {
          [FAKE_MODEL_ID]: { name: 'Fake One', tool_call: true, limit: { context: 100_000, output: 4096 } },
          // The moderator's model (`moderator.model`): the scripted server answers it with verdicts.
          [FAKE_MODERATION_MODEL_ID]: { name: 'Fake moderator', limit: { context: 100_000, output: 256 } },
        },
      },
    },
  }
}
