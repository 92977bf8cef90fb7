import {
  AGENT_PROFILE_CONFIGS,
  AGENT_PROFILES,
  type AgentProfileConfig,
  type PermissionAction,
  type PermissionRule,
} from '@sallyport/policy'
import { DENY_LIST } from '@sallyport/workspace-guard'

/** The scheduler's unattended profile: guarded like the gateway's. */
export const SCHEDULED_PROFILE = 'scheduled'

/** Agents whose tool calls the runtime guard checks: the gateway's three and `scheduled`. */
export const GUARDED_AGENTS: readonly string[] = Object.freeze([
  ...new Set(Object.values(AGENT_PROFILES)),
  SCHEDULED_PROFILE,
])

/**
 * The workspace guard's deny-list as the runtime's own `read` permission patterns: a second line
 * behind the plugin, derived from the same data so the two cannot drift. The runtime matches
 * these against the path as the model wrote it and case-sensitively, so they cover the plain
 * spellings (lower and upper case) only; the plugin applies the full rules to the resolved
 * target. Last match wins: the catch-all allow comes first, explicit allowances last.
 */
export function secretReadPatterns(): Readonly<Record<string, PermissionAction>> {
  const rules: Record<string, PermissionAction> = { '*': 'allow' }
  const deny = (pattern: string): void => {
    rules[pattern] = 'deny'
    rules[pattern.toUpperCase()] = 'deny'
  }
  for (const dir of [...DENY_LIST.vcsDirectories, ...DENY_LIST.credentialDirectories]) {
    deny(`*/${dir}`)
    deny(`*/${dir}/*`)
  }
  for (const name of DENY_LIST.deniedNames) {
    deny(`*/${name}`)
    deny(`*/${name}/*`)
  }
  for (const name of DENY_LIST.deniedFileNames) deny(`*/${name}`)
  for (const [parent, child] of DENY_LIST.deniedPairs) {
    deny(`*/${parent}/${child}`)
    deny(`*/${parent}/${child}/*`)
  }
  for (const suffix of DENY_LIST.deniedSuffixes) deny(`*${suffix}`)
  for (const needle of DENY_LIST.deniedSubstrings) deny(`*${needle}*`)
  // Common spellings of the name patterns the permission syntax cannot express.
  for (const pattern of ['*_rsa', '*_dsa', '*_ecdsa', '*_ed25519', '*/.env.*', '*/.env-*', '*/.env_*'])
    deny(pattern)
  for (const name of DENY_LIST.allowedNames) rules[`*/${name}`] = 'allow'
  return Object.freeze(rules)
}

/**
 * The gateway's agent profiles as the runtime must define them: the policy's profiles with the
 * `read` rule of the profiles that read replaced by {@link secretReadPatterns}, plus the
 * scheduler's profile. `cli init` writes these into the managed directory and the end-to-end
 * tests run against exactly the same.
 */
export function runtimeAgentProfiles(): Record<string, AgentProfileConfig> {
  const read = secretReadPatterns()
  const profiles: Record<string, AgentProfileConfig> = {}
  for (const [name, config] of Object.entries(AGENT_PROFILE_CONFIGS)) {
    const permission: Record<string, PermissionRule> = { ...config.permission }
    if (permission.read !== undefined && permission.read !== 'deny') permission.read = read
    profiles[name] = { ...config, permission }
  }
  profiles[SCHEDULED_PROFILE] = {
    mode: 'primary',
    description: 'Scheduled tasks: unattended, so nothing may ask; reading non-secret files only',
    permission: { '*': 'deny', read, question: 'deny' },
  }
  return profiles
}

/** Permission keys that are not tools (the runtime's pseudo-permissions). */
const NOT_TOOLS = new Set(['*', 'external_directory', 'doom_loop'])

/**
 * The tools each guarded profile may use at all, as the plugin enforces them on its own: a
 * profile with a wildcard denial may use only the tools it names with another action; one
 * without (`remote-full`) may use every tool the guard knows. The runtime's own permission rules
 * say the same, but an `always` approval given in ANY session is kept for the whole project and
 * outranks other agents' rules (measured on 1.18.33), so the plugin does not rely on them.
 */
export function profileToolAllowlists(): Readonly<Record<string, ReadonlySet<string> | 'all'>> {
  const out: Record<string, ReadonlySet<string> | 'all'> = {}
  for (const [name, config] of Object.entries(runtimeAgentProfiles())) {
    const permission = config.permission
    out[name] =
      permission['*'] === 'deny'
        ? new Set(
            Object.keys(permission).filter((tool) => !NOT_TOOLS.has(tool) && permission[tool] !== 'deny'),
          )
        : 'all'
  }
  return Object.freeze(out)
}
