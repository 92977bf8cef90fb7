import type { Capability } from './capabilities.ts'
import { listsByPolicy } from './grant-lists.ts'
import { type Policy, parsePolicy } from './policy.ts'

/** A static workflow prompt of the gateway. */
export type PromptName = 'gateway.implement' | 'gateway.debug' | 'gateway.review' | 'gateway.explain'

/** A prompt and the capability it needs. */
export interface PromptDefinition {
  readonly name: PromptName
  readonly requires: Capability | null
}

// A prompt only produces a user message that asks the client to call `gateway.agent.run`, so it
// needs exactly what that tool needs and can never widen a policy.
const prompt = (name: PromptName): PromptDefinition => Object.freeze({ name, requires: 'agent-run' })

// Keyed by every `PromptName` (in catalog order): a prompt missing here does not compile.
const LISTED = {
  'gateway.implement': true,
  'gateway.debug': true,
  'gateway.review': true,
  'gateway.explain': true,
} as const satisfies Record<PromptName, true>

/** Every prompt, in catalog order. */
export const PROMPTS: readonly PromptDefinition[] = Object.freeze(
  (Object.keys(LISTED) as PromptName[]).map(prompt),
)

const NAMES_BY_POLICY = Object.fromEntries(
  Object.entries(listsByPolicy(PROMPTS)).map(([policy, prompts]) => [
    policy,
    Object.freeze(prompts.map((p) => p.name)),
  ]),
) as Readonly<Record<Policy, readonly PromptName[]>>

/**
 * The prompt names `policy` may list and get (all four, for every policy).
 * @throws TypeError for an unknown policy.
 */
export function promptsFor(policy: Policy): readonly PromptName[] {
  return NAMES_BY_POLICY[parsePolicy(policy)]
}
