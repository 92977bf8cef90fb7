import { describe, expect, expectTypeOf, it } from 'vitest'
import { POLICIES } from './policy.ts'
import { RESOURCE_TEMPLATES, type ResourceTemplateName, resourceTemplatesFor } from './resource-templates.ts'

const SESSION_AND_JOB = [
  'gateway://sessions/{session}/messages',
  'gateway://sessions/{session}/diff',
  'gateway://sessions/{session}/todos',
  'gateway://jobs/{job}',
]

describe('resource templates', () => {
  it('offers the session views and job state to every policy', () => {
    expect(resourceTemplatesFor('chat').map((t) => t.uriTemplate)).toEqual(SESSION_AND_JOB)
  })

  it('adds workspace files for read and full only', () => {
    for (const policy of ['read', 'full'] as const) {
      expect(resourceTemplatesFor(policy).map((t) => t.uriTemplate)).toEqual([
        ...SESSION_AND_JOB,
        'gateway://workspace/{+path}',
      ])
    }
  })

  it('gives every template a unique gateway. name', () => {
    const names = RESOURCE_TEMPLATES.map((t) => t.name)
    expect(new Set(names).size).toBe(RESOURCE_TEMPLATES.length)
    for (const name of names) expect(name).toMatch(/^gateway\.[a-z.]+$/)
    expect(names).toContain('gateway.session.messages')
  })

  it('types every name, so a misspelt one fails to compile', () => {
    const all: Record<ResourceTemplateName, true> = {
      'gateway.session.messages': true,
      'gateway.session.diff': true,
      'gateway.session.todos': true,
      'gateway.job': true,
      'gateway.workspace.file': true,
    }
    expect(RESOURCE_TEMPLATES.map((t) => t.name).sort()).toEqual(Object.keys(all).sort())
    expectTypeOf(RESOURCE_TEMPLATES[0]!.name).toEqualTypeOf<ResourceTemplateName>()
  })

  it('throws a TypeError for an unknown policy', () => {
    expect(() => resourceTemplatesFor('owner' as never)).toThrow(TypeError)
    expect(POLICIES).toHaveLength(3)
  })
})
