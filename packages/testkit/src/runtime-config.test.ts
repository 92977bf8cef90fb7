import { describe, expect, it } from 'vitest'
import { AGENT_PROFILES, buildRuntimeConfig, deepMerge } from './runtime-config.ts'

describe('buildRuntimeConfig', () => {
  it('points the fake provider at the model server and uses it for titles too', () => {
    const config = buildRuntimeConfig('http://127.0.0.1:1234/v1')
    expect(config).toMatchObject({
      model: 'fake/fake-1',
      small_model: 'fake/fake-1',
      enabled_providers: ['fake'],
      autoupdate: false,
      share: 'disabled',
      provider: {
        fake: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:1234/v1' } },
      },
    })
  })

  it('defines the gateway profiles with the wildcard first (last matching rule wins)', () => {
    const { agent } = buildRuntimeConfig('http://x/v1') as { agent: typeof AGENT_PROFILES }
    expect(Object.keys(agent)).toEqual(['remote', 'remote-read', 'remote-full', 'scheduled', 'guarded'])
    expect(Object.keys(agent.remote.permission)[0]).toBe('*')
    expect(Object.keys(agent['remote-read'].permission)[0]).toBe('*')
    // Every profile a client drives may ask; the unattended scheduled profile may not.
    for (const [name, profile] of Object.entries(agent))
      expect([name, profile.permission.question]).toEqual([name, name === 'scheduled' ? 'deny' : 'allow'])
    expect(agent['remote-full'].permission).toMatchObject({ bash: 'ask', edit: 'ask' })
  })

  it('deep-merges caller config without mutating the profiles', () => {
    const config = buildRuntimeConfig('http://x/v1', {
      agent: { guarded: { permission: { bash: 'deny' } }, extra: { mode: 'primary' } },
      enabled_providers: ['fake', 'other'],
    }) as { agent: Record<string, { permission?: Record<string, string> }>; enabled_providers: string[] }
    expect(config.agent.guarded?.permission).toEqual({ bash: 'deny', edit: 'ask', question: 'allow' })
    expect(config.agent.extra).toEqual({ mode: 'primary' })
    expect(config.enabled_providers).toEqual(['fake', 'other'])
    expect(AGENT_PROFILES.guarded.permission.bash).toBe('ask')
  })

  it('replaces arrays and scalars in deepMerge', () => {
    expect(deepMerge({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { d: 4 } })).toEqual({
      a: [3],
      b: { c: 1, d: 4 },
    })
  })
})
