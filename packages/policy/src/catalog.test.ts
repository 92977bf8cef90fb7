import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { agentProfile } from './agent-profile.ts'
import { CAPABILITIES, capabilitiesFor, hasCapability } from './capabilities.ts'
import { catalogFor } from './catalog.ts'
import { allowedDecisions } from './permission-decisions.ts'
import { POLICIES, type Policy } from './policy.ts'
import { promptsFor } from './prompts.ts'
import { resourceTemplatesFor } from './resource-templates.ts'
import { isToolAllowed, TOOLS, toolsFor } from './tools.ts'

const ORDERED_PAIRS: [Policy, Policy][] = [
  ['chat', 'read'],
  ['read', 'full'],
  ['chat', 'full'],
]
const isSubset = (a: readonly unknown[], b: readonly unknown[]) => a.every((x) => b.includes(x))

describe('catalog', () => {
  it('reports the policy and its tool, resource and prompt names', () => {
    for (const policy of POLICIES) {
      expect(catalogFor(policy)).toEqual({
        policy,
        tools: toolsFor(policy),
        resources: resourceTemplatesFor(policy).map((t) => t.name),
        prompts: promptsFor(policy),
      })
    }
    expect(catalogFor('chat').resources).not.toContain('gateway.workspace.file')
    expect(catalogFor('read').resources).toContain('gateway.workspace.file')
  })

  it('grows monotonically: chat ⊆ read ⊆ full for tools, resources, prompts, capabilities and decisions', () => {
    for (const [lower, higher] of ORDERED_PAIRS) {
      expect(isSubset(toolsFor(lower), toolsFor(higher))).toBe(true)
      expect(isSubset(resourceTemplatesFor(lower), resourceTemplatesFor(higher))).toBe(true)
      expect(isSubset(promptsFor(lower), promptsFor(higher))).toBe(true)
      expect(isSubset(capabilitiesFor(lower), capabilitiesFor(higher))).toBe(true)
      expect(isSubset(allowedDecisions(lower), allowedDecisions(higher))).toBe(true)
      expect(isSubset(allowedDecisions(lower, 'webfetch'), allowedDecisions(higher, 'webfetch'))).toBe(true)
      // Strictly: each step up adds something.
      expect(toolsFor(higher).length).toBeGreaterThan(toolsFor(lower).length)
    }
  })

  it('never grants a lower policy what a higher one lacks (any tool name or capability)', () => {
    const names = fc.oneof(fc.constantFrom(...TOOLS.map((t) => t.name)), fc.string({ maxLength: 30 }))
    fc.assert(
      fc.property(
        fc.constantFrom(...ORDERED_PAIRS),
        names,
        fc.constantFrom(...CAPABILITIES),
        ([lo, hi], name, cap) => {
          if (isToolAllowed(lo, name)) expect(isToolAllowed(hi, name)).toBe(true)
          if (hasCapability(lo, cap)) expect(hasCapability(hi, cap)).toBe(true)
        },
      ),
      { numRuns: 1000 },
    )
  })

  it('uses distinct agent profiles per policy', () => {
    expect(new Set(POLICIES.map(agentProfile)).size).toBe(3)
    expect(() => agentProfile('root' as never)).toThrow(TypeError)
  })

  it('throws a TypeError for an unknown policy', () => {
    expect(() => catalogFor('owner' as never)).toThrow(TypeError)
  })
})
