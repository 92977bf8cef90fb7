import { type Policy, parsePolicy } from './policy.ts'
import { type PromptName, promptsFor } from './prompts.ts'
import { type ResourceTemplateName, resourceTemplatesFor } from './resource-templates.ts'
import { type ToolName, toolsFor } from './tools.ts'

/** The names a policy's MCP catalog offers; what `gateway.catalog.get` reports. */
export interface Catalog {
  readonly policy: Policy
  readonly tools: readonly ToolName[]
  /** Resource template names, e.g. `gateway.session.messages`. */
  readonly resources: readonly ResourceTemplateName[]
  readonly prompts: readonly PromptName[]
}

/**
 * The tool, resource template and prompt names `policy` may see. Never anything of the agent
 * runtime's own.
 * @throws TypeError for an unknown policy.
 * @example catalogFor('chat').tools.length // 7
 */
export function catalogFor(policy: Policy): Catalog {
  const checked = parsePolicy(policy)
  return Object.freeze({
    policy: checked,
    tools: toolsFor(checked),
    resources: Object.freeze(resourceTemplatesFor(checked).map((t) => t.name)),
    prompts: promptsFor(checked),
  })
}
