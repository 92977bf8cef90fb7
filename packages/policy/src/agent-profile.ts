import { type Policy, parsePolicy } from './policy.ts'

/** The managed agent profile the gateway runs a policy's messages with. */
export type AgentProfile = 'remote' | 'remote-read' | 'remote-full'

/** Policy → agent profile (spec "Policy model", last row). */
export const AGENT_PROFILES: Readonly<Record<Policy, AgentProfile>> = Object.freeze({
  chat: 'remote',
  read: 'remote-read',
  full: 'remote-full',
})

/**
 * The one fixed agent profile of `policy`: `chat` → `remote`, `read` → `remote-read`,
 * `full` → `remote-full`.
 * @throws TypeError for an unknown policy.
 */
export function agentProfile(policy: Policy): AgentProfile {
  return AGENT_PROFILES[parsePolicy(policy)]
}
