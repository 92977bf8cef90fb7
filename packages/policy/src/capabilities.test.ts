import { describe, expect, it } from 'vitest'
import { agentProfile } from './agent-profile.ts'
import { CAPABILITIES, CAPABILITY_TABLE, capabilitiesFor, hasCapability } from './capabilities.ts'
import { POLICIES, type Policy } from './policy.ts'

// Copied verbatim from spec/gateway-spec.md, "Policy model".
const SPEC_TABLE = `
| Capability | chat | read | full |
|---|---|---|---|
| Guarded agent run, job polling, job cancel | yes | yes | yes |
| Owned session list and get | yes | yes | yes |
| Session messages, diff and todos resources | yes | yes | yes |
| Question response and permission rejection | yes | yes | yes |
| Bounded workspace search and read | no | yes | yes |
| Session fork and delete | no | no | yes |
| Permission approval (once or always) | no | no | yes |
| Managed agent profile | remote | remote-read | remote-full |
`

function specRows(): { label: string; cells: Record<Policy, string> }[] {
  const lines = SPEC_TABLE.trim().split('\n')
  const header = lines[0]!.split('|').map((cell) => cell.trim())
  expect(header.slice(1, 5)).toEqual(['Capability', 'chat', 'read', 'full'])
  return lines.slice(2).map((line) => {
    const [, label, chat, read, full] = line.split('|').map((cell) => cell.trim())
    return { label: label!, cells: { chat: chat!, read: read!, full: full! } }
  })
}

describe('capability table', () => {
  it('matches the spec table row by row', () => {
    const rows = specRows()
    const capabilityRows = rows.filter((r) => r.label !== 'Managed agent profile')
    expect(capabilityRows).toHaveLength(CAPABILITY_TABLE.length)
    for (const spec of capabilityRows) {
      const ours = CAPABILITY_TABLE.find((r) => r.description === spec.label)
      expect(ours, spec.label).toBeDefined()
      for (const policy of POLICIES) {
        const expected = spec.cells[policy] === 'yes'
        expect(['yes', 'no']).toContain(spec.cells[policy])
        expect(ours!.grants[policy], `${spec.label} / ${policy}`).toBe(expected)
        expect(hasCapability(policy, ours!.capability), `${spec.label} / ${policy}`).toBe(expected)
      }
    }
    const profile = rows.find((r) => r.label === 'Managed agent profile')!
    for (const policy of POLICIES) expect(agentProfile(policy)).toBe(profile.cells[policy])
  })

  it('lists each capability once, in table order', () => {
    expect(new Set(CAPABILITIES).size).toBe(CAPABILITY_TABLE.length)
    expect(capabilitiesFor('full')).toEqual(CAPABILITIES)
  })

  it('gives each policy exactly the capabilities hasCapability reports', () => {
    for (const policy of POLICIES) {
      expect(capabilitiesFor(policy)).toEqual(CAPABILITIES.filter((c) => hasCapability(policy, c)))
    }
    expect(capabilitiesFor('chat')).toHaveLength(4)
    expect(capabilitiesFor('read')).toHaveLength(5)
  })

  it('fails closed for unknown capabilities and policies', () => {
    expect(hasCapability('full', 'admin' as never)).toBe(false)
    expect(hasCapability('full', 'toString' as never)).toBe(false)
    expect(hasCapability('admin' as never, 'agent-run')).toBe(false)
    expect(hasCapability('__proto__' as never, 'agent-run')).toBe(false)
    expect(() => capabilitiesFor('admin' as never)).toThrow(TypeError)
  })

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(CAPABILITY_TABLE)).toBe(true)
    expect(Object.isFrozen(CAPABILITY_TABLE[0]!.grants)).toBe(true)
    expect(() => {
      ;(CAPABILITY_TABLE[4]!.grants as Record<Policy, boolean>).chat = true
    }).toThrow(TypeError)
    expect(hasCapability('chat', 'workspace-search-read')).toBe(false)
  })
})
