import { DEFAULT_MAX_BYTES, DEFAULT_SEARCH_LIMIT, type WorkspaceGuard } from '@sallyport/workspace-guard'
import { READ_ONLY_HINTS, type ToolDefinition } from '../mcp/define-tool.js'
import { WorkspaceRead, WorkspaceReadInput, WorkspaceSearch, WorkspaceSearchInput } from '../schemas.js'

/** `gateway.workspace.search`: every match passed the guard's filesystem check before it is returned. */
export function workspaceSearchTool(
  guard: WorkspaceGuard,
): ToolDefinition<typeof WorkspaceSearchInput, typeof WorkspaceSearch> {
  return {
    title: 'Search the workspace',
    description:
      'Search the workspace by file name (mode files: substring or glob), by literal text (mode text) or by symbol definition (mode symbols). Secret and version-control files are never searched.',
    input: WorkspaceSearchInput,
    output: WorkspaceSearch,
    hints: READ_ONLY_HINTS,
    run: async ({ mode, query, limit }) => {
      const result = await guard.search({ mode, query, limit: limit ?? DEFAULT_SEARCH_LIMIT })
      return { matches: result.matches.map((m) => ({ ...m })), truncated: result.truncated }
    },
  }
}

/** `gateway.workspace.read`: text-only, at most `DEFAULT_MAX_BYTES` (256 KiB), through the guard's safe open. */
export function workspaceReadTool(
  guard: WorkspaceGuard,
): ToolDefinition<typeof WorkspaceReadInput, typeof WorkspaceRead> {
  return {
    title: 'Read a workspace file',
    description: `Read one UTF-8 text file (at most ${DEFAULT_MAX_BYTES / 1024} KiB) by its path relative to the workspace root.`,
    input: WorkspaceReadInput,
    output: WorkspaceRead,
    hints: READ_ONLY_HINTS,
    run: async ({ path }) => {
      const file = await guard.read(path)
      return { path: file.path, text: file.text, mimeType: file.mimeType, truncated: false as const }
    },
  }
}
