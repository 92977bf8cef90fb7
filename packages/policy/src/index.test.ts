import { describe, expect, it } from 'vitest'
import * as api from './index.ts'

describe('package entry', () => {
  it('exports exactly the public API', () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        'AGENT_PROFILES',
        'AGENT_PROFILE_CONFIGS',
        'CAPABILITIES',
        'CAPABILITY_TABLE',
        'MODERATOR_AGENT',
        'ONCE_ONLY_PERMISSIONS',
        'POLICIES',
        'PROMPTS',
        'RESOURCE_TEMPLATES',
        'TOOLS',
        'agentProfile',
        'allowedDecisions',
        'canApprove',
        'capabilitiesFor',
        'catalogFor',
        'hasCapability',
        'isDecisionAllowed',
        'isPolicy',
        'isToolAllowed',
        'moderatorRuntimeConfig',
        'parsePolicy',
        'promptsFor',
        'resourceTemplatesFor',
        'toolsFor',
      ].sort(),
    )
  })
})
