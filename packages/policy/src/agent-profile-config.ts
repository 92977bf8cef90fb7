import type { AgentProfile } from './agent-profile.ts'

/** An opencode agent permission map: tool name (or `*`) → action. Later keys win. */
export type PermissionMap = Readonly<Record<string, 'allow' | 'ask' | 'deny'>>

/** One agent definition as the runtime's `agent.<name>` config expects it. */
export interface AgentProfileConfig {
  readonly mode: 'primary'
  readonly description: string
  readonly permission: PermissionMap
}

/**
 * The runtime configuration of the gateway's agent profiles: the ONE definition the stack
 * (`agentgate init`) installs and the end-to-end tests run against. Rules are evaluated in
 * order, last match wins, so the wildcard comes first: in `remote` and `remote-read` a tool
 * installed later is denied without any gateway update (spec "Remote sessions and agent
 * profiles" rule 3). Custom agents default to `question: deny`, so every profile that may ask
 * the client a question allows it explicitly. `full` does not bypass the runtime's own
 * permissions: shell and edits ask, and the client's decision is relayed.
 */
export const AGENT_PROFILE_CONFIGS: Readonly<Record<AgentProfile, AgentProfileConfig>> = Object.freeze({
  remote: Object.freeze({
    mode: 'primary',
    description: 'Gateway chat profile: every tool denied (also tools installed later) except question',
    permission: Object.freeze({ '*': 'deny', question: 'allow' }),
  }),
  'remote-read': Object.freeze({
    mode: 'primary',
    description: 'Gateway read profile: wildcard denial plus the read-only tools',
    permission: Object.freeze({
      '*': 'deny',
      read: 'allow',
      grep: 'allow',
      glob: 'allow',
      list: 'allow',
      question: 'allow',
    }),
  }),
  'remote-full': Object.freeze({
    mode: 'primary',
    description: 'Gateway full profile: shell and edits ask the client, nothing outside the workspace',
    permission: Object.freeze({ question: 'allow', bash: 'ask', edit: 'ask', external_directory: 'deny' }),
  }),
})
