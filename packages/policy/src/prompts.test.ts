import { describe, expect, it } from 'vitest'
import { POLICIES } from './policy.ts'
import { promptsFor } from './prompts.ts'

describe('prompts', () => {
  it('offers the four workflow prompts to every policy', () => {
    for (const policy of POLICIES) {
      expect(promptsFor(policy)).toEqual([
        'gateway.implement',
        'gateway.debug',
        'gateway.review',
        'gateway.explain',
      ])
    }
  })

  it('throws a TypeError for an unknown policy', () => {
    expect(() => promptsFor('' as never)).toThrow(TypeError)
  })
})
