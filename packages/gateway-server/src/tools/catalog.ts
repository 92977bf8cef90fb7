import { catalogFor } from '@sallyport/policy'
import { READ_ONLY_HINTS, type ToolDefinition } from '../mcp/define-tool.js'
import type { Principal } from '../principal.js'
import { Catalog, CatalogGetInput } from '../schemas.js'

/** `gateway.catalog.get`: the caller's own tools, resource templates and prompts, by name. Nothing of the runtime. */
export function catalogTool(principal: Principal): ToolDefinition<typeof CatalogGetInput, typeof Catalog> {
  return {
    title: 'What this credential may use',
    description:
      'List the tools, resource templates and prompts available to this credential, and its policy.',
    input: CatalogGetInput,
    output: Catalog,
    hints: READ_ONLY_HINTS,
    run: async () => {
      const catalog = catalogFor(principal.policy)
      return {
        service: 'sallyport',
        policy: principal.policy,
        principal: principal.username,
        tools: [...catalog.tools],
        resources: [...catalog.resources],
        prompts: [...catalog.prompts],
      }
    },
  }
}
