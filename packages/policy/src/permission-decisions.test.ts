import { describe, expect, it } from 'vitest'
import {
  allowedDecisions,
  canApprove,
  isDecisionAllowed,
  ONCE_ONLY_PERMISSIONS,
} from './permission-decisions.ts'

describe('permission decisions', () => {
  it('lets full approve and nobody else', () => {
    expect(canApprove('full')).toBe(true)
    expect(canApprove('read')).toBe(false)
    expect(canApprove('chat')).toBe(false)
    expect(canApprove('FULL' as never)).toBe(false)
    expect(canApprove(undefined as never)).toBe(false)
  })

  it.each([
    ['chat', undefined, ['reject']],
    ['read', undefined, ['reject']],
    ['full', undefined, ['once', 'always', 'reject']],
    ['chat', 'bash', ['reject']],
    ['full', 'bash', ['once', 'always', 'reject']],
    ['full', 'edit', ['once', 'always', 'reject']],
    ['chat', 'webfetch', ['reject']],
    ['read', 'webfetch', ['reject']],
    ['full', 'webfetch', ['once', 'reject']],
    // Exact names only: nothing else is once-only by resemblance.
    ['full', 'WebFetch', ['once', 'always', 'reject']],
    ['full', 'webfetch ', ['once', 'always', 'reject']],
  ] as const)('allows %s on a %s ask the decisions %j', (policy, permission, decisions) => {
    expect(allowedDecisions(policy, permission)).toEqual(decisions)
    for (const decision of ['once', 'always', 'reject']) {
      expect(isDecisionAllowed(policy, decision, permission)).toBe(
        (decisions as readonly string[]).includes(decision),
      )
    }
  })

  it('never offers "always" for a once-only permission', () => {
    expect(ONCE_ONLY_PERMISSIONS).toEqual(['webfetch'])
    expect(Object.isFrozen(ONCE_ONLY_PERMISSIONS)).toBe(true)
    for (const permission of ONCE_ONLY_PERMISSIONS) {
      expect(allowedDecisions('full', permission)).not.toContain('always')
      expect(isDecisionAllowed('full', 'always', permission)).toBe(false)
    }
  })

  it('refuses unknown decisions and policies', () => {
    for (const decision of ['approve', 'allow', 'Once', '', 'toString']) {
      expect(isDecisionAllowed('full', decision)).toBe(false)
    }
    expect(isDecisionAllowed('root' as never, 'reject')).toBe(false)
    expect(isDecisionAllowed('root' as never, 'once', 'bash')).toBe(false)
    expect(() => allowedDecisions('root' as never)).toThrow(TypeError)
    expect(() => allowedDecisions('root' as never, 'webfetch')).toThrow(TypeError)
  })

  it('returns frozen lists', () => {
    expect(Object.isFrozen(allowedDecisions('full', 'webfetch'))).toBe(true)
  })
})
