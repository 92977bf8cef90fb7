import type { AgentProfile } from './agent-profile.ts'

/** An opencode agent permission map: tool name (or `*`) → action. Later keys win. */
export type PermissionAction = 'allow' | 'ask' | 'deny'
/** A tool's rule: one action, or an action per pattern (for `read`: the file path). */
export type PermissionRule = PermissionAction | Readonly<Record<string, PermissionAction>>
export type PermissionMap = Readonly<Record<string, PermissionRule>>

/**
 * Files the agent may not read for a `read` credential, the runtime-side twin of the workspace
 * guard's deny rules: without it the agent could print a file that `gateway.workspace.read`
 * refuses. Patterns match the file path (`*` spans directories); the last match wins, so the
 * example env file is allowed again at the end.
 */
export const SECRET_READ_RULES: Readonly<Record<string, PermissionAction>> = Object.freeze({
  '*': 'allow',
  '*.env': 'deny',
  '*.env.*': 'deny',
  '*/.git/*': 'deny',
  '*/.ssh/*': 'deny',
  '*/.aws/*': 'deny',
  '*/.gnupg/*': 'deny',
  '*/.docker/*': 'deny',
  '*/.kube/*': 'deny',
  '*.pem': 'deny',
  '*.key': 'deny',
  '*.p12': 'deny',
  '*.pfx': 'deny',
  '*id_rsa*': 'deny',
  '*id_ecdsa*': 'deny',
  '*id_ed25519*': 'deny',
  '*auth.json': 'deny',
  '*.npmrc': 'deny',
  '*.netrc': 'deny',
  '*.pgpass': 'deny',
  '*.git-credentials': 'deny',
  '*credential*': 'deny',
  '*secret*': 'deny',
  '*password*': 'deny',
  '*.env.example': 'allow',
})

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
    description: 'Gateway read profile: wildcard denial plus reading non-secret files',
    permission: Object.freeze({
      '*': 'deny',
      // grep and glob stay denied: their permission patterns are the search pattern, not the
      // files searched, so a rule cannot keep them out of secret files (measured: grep printed
      // a .env line). The client has the guarded gateway.workspace.search instead.
      read: SECRET_READ_RULES,
      question: 'allow',
    }),
  }),
  'remote-full': Object.freeze({
    mode: 'primary',
    description: 'Gateway full profile: shell and edits ask the client, nothing outside the workspace',
    permission: Object.freeze({ question: 'allow', bash: 'ask', edit: 'ask', external_directory: 'deny' }),
  }),
})
