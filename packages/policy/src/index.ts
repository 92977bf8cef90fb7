/** Agent profile of each policy: `remote`, `remote-read`, `remote-full`. */
export { AGENT_PROFILES, type AgentProfile, agentProfile } from './agent-profile.ts'
/** The runtime configuration of each agent profile (the one definition stack and tests use). */
export {
  AGENT_PROFILE_CONFIGS,
  type AgentProfileConfig,
  type PermissionAction,
  type PermissionMap,
  type PermissionRule,
} from './agent-profile-config.ts'
/** The spec's capability table as data, and lookups on it. */
export {
  CAPABILITIES,
  CAPABILITY_TABLE,
  type Capability,
  type CapabilityRow,
  capabilitiesFor,
  hasCapability,
} from './capabilities.ts'
/** The names a policy's MCP catalog offers. */
export { type Catalog, catalogFor } from './catalog.ts'
/** The moderator runtime's deny-all configuration and agent name. */
export { MODERATOR_AGENT, moderatorRuntimeConfig } from './moderator-config.ts'
/** Permission decisions: approval for `full` only (never "always" for webfetch), rejection for every policy. */
export {
  allowedDecisions,
  canApprove,
  isDecisionAllowed,
  ONCE_ONLY_PERMISSIONS,
  type PermissionDecision,
} from './permission-decisions.ts'
/** The policies `chat`, `read`, `full` and their parsing. */
export { isPolicy, POLICIES, type Policy, parsePolicy } from './policy.ts'
/** The four workflow prompts. */
export { PROMPTS, type PromptDefinition, type PromptName, promptsFor } from './prompts.ts'
/** Resource templates per policy. */
export {
  RESOURCE_TEMPLATES,
  type ResourceTemplate,
  type ResourceTemplateName,
  resourceTemplatesFor,
} from './resource-templates.ts'
/** Tools per policy (7 / 9 / 11). */
export { isToolAllowed, TOOLS, type ToolDefinition, type ToolName, toolsFor } from './tools.ts'
