/**
 * The module the runtime loads through the managed directory's `plugins/sallyport-tasks.js`
 * wrapper: the assistant's task tools. Bundled with everything it needs, at a fixed path. The
 * runtime calls every exported function as a plugin, so this file exports exactly one.
 */
import { GUARDED_AGENTS } from '@sallyport/runtime-guard'
import { STACK_DIR_ENV } from './plugin-wrapper.ts'
import { createTaskTools, type ToolDefinition } from './task-tools.ts'

/** The task tools for the stack named by `SALLYPORT_STACK_DIR`; none when it is not set. */
export const SallyportTasks = async (): Promise<{ tool?: Record<string, ToolDefinition> }> => {
  const root = process.env[STACK_DIR_ENV]
  if (!root?.startsWith('/')) return {}
  return { tool: createTaskTools({ root, deniedAgents: GUARDED_AGENTS }) }
}
