import { describe, expect, it } from 'vitest'
import { AGENT_PROFILES } from './agent-profile.ts'
import { AGENT_PROFILE_CONFIGS } from './agent-profile-config.ts'

describe('AGENT_PROFILE_CONFIGS', () => {
  it('defines exactly the profiles the policies select', () => {
    expect(Object.keys(AGENT_PROFILE_CONFIGS).sort()).toEqual(
      [...new Set(Object.values(AGENT_PROFILES))].sort(),
    )
  })

  it.each(['remote', 'remote-read'] as const)(
    '%s starts with a wildcard denial, so a new tool is denied',
    (name) => {
      const keys = Object.keys(AGENT_PROFILE_CONFIGS[name].permission)
      expect(keys[0]).toBe('*')
      expect(AGENT_PROFILE_CONFIGS[name].permission['*']).toBe('deny')
    },
  )

  it('the chat profile allows nothing but the question tool', () => {
    const allowed = Object.entries(AGENT_PROFILE_CONFIGS.remote.permission).filter(([, a]) => a !== 'deny')
    expect(allowed).toEqual([['question', 'allow']])
  })

  it('the read profile allows only reading (and asking), never searching', () => {
    const allowed = Object.entries(AGENT_PROFILE_CONFIGS['remote-read'].permission)
      .filter(([, rule]) => rule !== 'deny')
      .map(([t]) => t)
      .sort()
    expect(allowed).toEqual(['question', 'read'])
  })

  it('no profile may start a subagent, search content or search the web', () => {
    for (const [name, config] of Object.entries(AGENT_PROFILE_CONFIGS)) {
      const action = (tool: string): unknown => config.permission[tool] ?? config.permission['*']
      for (const tool of ['task', 'grep', 'websearch', 'codesearch'])
        expect([name, tool, action(tool)]).toEqual([name, tool, 'deny'])
    }
  })

  it('the full profile asks before fetching from the web; the others cannot fetch at all', () => {
    expect(AGENT_PROFILE_CONFIGS['remote-full'].permission.webfetch).toBe('ask')
    expect(
      AGENT_PROFILE_CONFIGS.remote.permission.webfetch ?? AGENT_PROFILE_CONFIGS.remote.permission['*'],
    ).toBe('deny')
    const read = AGENT_PROFILE_CONFIGS['remote-read'].permission
    expect(read.webfetch ?? read['*']).toBe('deny')
  })

  it('every profile may ask questions, and the full profile asks before shell and edits', () => {
    for (const config of Object.values(AGENT_PROFILE_CONFIGS))
      expect(config.permission.question).toBe('allow')
    expect(AGENT_PROFILE_CONFIGS['remote-full'].permission).toMatchObject({
      bash: 'ask',
      edit: 'ask',
      external_directory: 'deny',
    })
  })

  it('is frozen', () => {
    expect(Object.isFrozen(AGENT_PROFILE_CONFIGS)).toBe(true)
    expect(Object.isFrozen(AGENT_PROFILE_CONFIGS.remote.permission)).toBe(true)
  })
})
