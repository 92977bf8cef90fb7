import { describe, expect, it } from 'vitest'
import { hasCapability } from './capabilities.ts'
import { POLICIES } from './policy.ts'
import { isToolAllowed, TOOLS, toolsFor } from './tools.ts'

// DESIGN.md "The tool surface", written out.
const CHAT = [
  'gateway.agent.run',
  'gateway.job.get',
  'gateway.job.cancel',
  'gateway.session.list',
  'gateway.session.get',
  'gateway.interaction.respond',
  'gateway.catalog.get',
]
const READ = [...CHAT, 'gateway.workspace.search', 'gateway.workspace.read']
const FULL = [...READ, 'gateway.session.fork', 'gateway.session.delete']

describe('tools', () => {
  it('offers 7 tools to chat, 9 to read and 11 to full', () => {
    expect(toolsFor('chat')).toHaveLength(7)
    expect(toolsFor('read')).toHaveLength(9)
    expect(toolsFor('full')).toHaveLength(11)
  })

  it('offers exactly the tools of the design table to each policy', () => {
    expect([...toolsFor('chat')].sort()).toEqual([...CHAT].sort())
    expect([...toolsFor('read')].sort()).toEqual([...READ].sort())
    expect([...toolsFor('full')].sort()).toEqual([...FULL].sort())
  })

  it('advertises the workspace tools only to read and full', () => {
    for (const name of ['gateway.workspace.search', 'gateway.workspace.read']) {
      expect(isToolAllowed('chat', name)).toBe(false)
      expect(isToolAllowed('read', name)).toBe(true)
      expect(isToolAllowed('full', name)).toBe(true)
    }
  })

  it('agrees with toolsFor and with the capability each tool requires', () => {
    for (const policy of POLICIES) {
      for (const tool of TOOLS) {
        const expected = tool.requires === null || hasCapability(policy, tool.requires)
        expect(isToolAllowed(policy, tool.name), `${policy} ${tool.name}`).toBe(expected)
        expect(toolsFor(policy).includes(tool.name)).toBe(expected)
      }
    }
  })

  it('refuses unknown tool names and unknown policies', () => {
    for (const name of ['gateway.shell', 'bash', 'gateway.agent.run ', 'GATEWAY.AGENT.RUN', '', 'toString']) {
      expect(isToolAllowed('full', name)).toBe(false)
    }
    expect(isToolAllowed('admin' as never, 'gateway.agent.run')).toBe(false)
    expect(isToolAllowed('full', 42 as never)).toBe(false)
    expect(() => toolsFor('admin' as never)).toThrow(TypeError)
  })

  it('names every tool once, with the gateway. prefix', () => {
    const names = TOOLS.map((t) => t.name)
    expect(new Set(names).size).toBe(11)
    for (const name of names) expect(name).toMatch(/^gateway\.[a-z]+\.[a-z]+$/)
  })

  it('returns lists a caller cannot change', () => {
    const list = toolsFor('chat') as string[]
    expect(() => list.push('gateway.session.delete')).toThrow(TypeError)
    expect(isToolAllowed('chat', 'gateway.session.delete')).toBe(false)
  })
})
