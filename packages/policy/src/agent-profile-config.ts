import type { AgentProfile } from './agent-profile.ts'

/** An opencode agent permission map: tool name (or `*`) → action. Later keys win. */
export type PermissionAction = 'allow' | 'ask' | 'deny'
/** A tool's rule: one action, or an action per pattern (for `read`: the file path). */
export type PermissionRule = PermissionAction | Readonly<Record<string, PermissionAction>>
export type PermissionMap = Readonly<Record<string, PermissionRule>>

/** One agent definition as the runtime's `agent.<name>` config expects it. */
export interface AgentProfileConfig {
  readonly mode: 'primary'
  readonly description: string
  readonly permission: PermissionMap
}

/**
 * The runtime configuration of the gateway's agent profiles, the ONE definition of what each
 * profile may do. Rules are evaluated in order, last match wins, so the wildcard comes first: in
 * `remote` and `remote-read` a tool installed later is denied without any gateway update (spec
 * "Remote sessions and agent profiles" rule 3). Custom agents default to `question: deny`, so
 * every profile that may ask the client a question allows it explicitly. `full` does not bypass
 * the runtime's own permissions: shell, edits and web fetches ask, and the client's decision is
 * relayed.
 *
 * `read: 'allow'` is never the whole story: the stack installs these through
 * `@sallyport/runtime-guard`, which replaces it with the workspace guard's secret-file patterns
 * and runs the guard itself before every tool call of these agents (symlinks, hard links,
 * special files, case-insensitive secret names).
 *
 * Subagents (`task`) are denied in every profile: a subagent runs with its own agent's
 * permissions, not the caller's (measured: a `general` subagent ran a shell with no ask).
 */
export const AGENT_PROFILE_CONFIGS: Readonly<Record<AgentProfile, AgentProfileConfig>> = Object.freeze({
  remote: Object.freeze({
    mode: 'primary',
    description: 'Gateway chat profile: every tool denied (also tools installed later) except question',
    permission: Object.freeze({ '*': 'deny', question: 'allow' }),
  }),
  'remote-read': Object.freeze({
    mode: 'primary',
    description: 'Gateway read profile: wildcard denial plus reading non-secret files',
    permission: Object.freeze({
      '*': 'deny',
      // grep and glob stay denied: their permission patterns are the search pattern, not the
      // files searched, so a rule cannot keep them out of secret files (measured: grep printed
      // a .env line). The client has the guarded gateway.workspace.search instead.
      read: 'allow',
      question: 'allow',
    }),
  }),
  'remote-full': Object.freeze({
    mode: 'primary',
    description:
      'Gateway full profile: shell, edits and web fetches ask the client; no subagents, nothing outside the workspace',
    permission: Object.freeze({
      read: 'allow',
      question: 'allow',
      bash: 'ask',
      edit: 'ask',
      webfetch: 'ask',
      task: 'deny',
      grep: 'deny',
      websearch: 'deny',
      codesearch: 'deny',
      external_directory: 'deny',
    }),
  }),
})
