import { describe, expect, it } from 'vitest'
import { allowedDecisions, canApprove, isDecisionAllowed } from './permission-decisions.ts'

describe('permission decisions', () => {
  it('lets full approve and nobody else', () => {
    expect(canApprove('full')).toBe(true)
    expect(canApprove('read')).toBe(false)
    expect(canApprove('chat')).toBe(false)
    expect(canApprove('FULL' as never)).toBe(false)
    expect(canApprove(undefined as never)).toBe(false)
  })

  it.each([
    ['chat', ['reject']],
    ['read', ['reject']],
    ['full', ['once', 'always', 'reject']],
  ] as const)('allows %s the decisions %j', (policy, decisions) => {
    expect(allowedDecisions(policy)).toEqual(decisions)
    for (const decision of ['once', 'always', 'reject']) {
      expect(isDecisionAllowed(policy, decision)).toBe((decisions as readonly string[]).includes(decision))
    }
  })

  it('refuses unknown decisions and policies', () => {
    for (const decision of ['approve', 'allow', 'Once', '', 'toString']) {
      expect(isDecisionAllowed('full', decision)).toBe(false)
    }
    expect(isDecisionAllowed('root' as never, 'reject')).toBe(false)
    expect(() => allowedDecisions('root' as never)).toThrow(TypeError)
  })
})
