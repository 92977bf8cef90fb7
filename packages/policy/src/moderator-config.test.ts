import { describe, expect, it } from 'vitest'
import { MODERATOR_AGENT, moderatorRuntimeConfig } from './moderator-config.ts'

describe('moderatorRuntimeConfig', () => {
  it('denies every tool, for the default agent and the moderator agent', () => {
    const config = moderatorRuntimeConfig() as {
      permission: Record<string, string>
      agent: Record<string, { permission: Record<string, string> }>
    }
    expect(config.permission).toEqual({ '*': 'deny' })
    expect(config.agent[MODERATOR_AGENT]?.permission).toEqual({ '*': 'deny' })
    expect(Object.keys(config.agent)).toEqual([MODERATOR_AGENT])
  })
})
