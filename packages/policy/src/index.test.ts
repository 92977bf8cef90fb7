import { readdirSync, readFileSync } from 'node:fs'
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
        'parsePolicy',
        'promptsFor',
        'resourceTemplatesFor',
        'toolsFor',
      ].sort(),
    )
  })

  it('imports no node: module in its sources, so other runtimes can use it', () => {
    const dir = new URL('./', import.meta.url)
    const sources = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    expect(sources.length).toBeGreaterThan(5)
    for (const name of sources) {
      const text = readFileSync(new URL(name, dir), 'utf8')
      expect(text, name).not.toMatch(/from\s+['"]node:/)
      expect(text, name).not.toMatch(/\b(import|require)\s*\(\s*['"]node:/)
    }
  })
})
