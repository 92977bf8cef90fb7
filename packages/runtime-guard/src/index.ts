/**
 * `@sallyport/runtime-guard`: a native plugin of the agent runtime that holds the gateway's
 * agents to the workspace guard — every tool call they make, in the runtime, on a remote
 * credential's behalf.
 */

/** The plugin factory, its options and hook shapes, and the secret variables it removes. */
export {
  createRuntimeGuard,
  type PluginInput,
  RUNTIME_SECRET_ENV,
  type RuntimeGuardHooks,
  type RuntimeGuardOptions,
  type RuntimeGuardPlugin,
} from './create-runtime-guard.ts'
/** The fetch check on its own (loopback, private, link-local and reserved addresses). */
export { checkFetchTarget, type FetchVerdict, isBlockedAddress, type LookupAll } from './fetch-target.ts'
/** The agents the guard applies to, and the profiles as the runtime must define them. */
export {
  GUARDED_AGENTS,
  profileToolAllowlists,
  runtimeAgentProfiles,
  SCHEDULED_PROFILE,
  secretReadPatterns,
} from './guarded-profiles.ts'
/** The managed directory's plugin wrapper and the bundled module it imports. */
export {
  bundledPluginPath,
  PLUGIN_WRAPPER_FILE,
  pluginWrapperSource,
  RUNTIME_GUARD_EXIT_CODE,
  RUNTIME_GUARD_MODULE_ENV,
} from './plugin-wrapper.ts'
/** What the guard does with each tool, and the error a refused call gets. */
export {
  enforceToolCall,
  INSTRUCTION_FILES,
  TOOL_RULES,
  ToolRefusedError,
  type ToolRule,
} from './tool-rules.ts'
