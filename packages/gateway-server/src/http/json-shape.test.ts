import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonShapeExcess, MAX_BODY_DEPTH, MAX_BODY_VALUES } from './json-shape.js'

const bytes = (text: string) => new TextEncoder().encode(text)

describe('jsonShapeExcess', () => {
  it('counts nesting and values outside strings only, escapes included', () => {
    expect(jsonShapeExcess(bytes('[[1,2],{"a":[3]}]'), 3, 7)).toBeUndefined()
    expect(jsonShapeExcess(bytes('[[[[1]]]]'), 3, 100)).toBe('depth')
    expect(jsonShapeExcess(bytes('[1,2,3,4]'), 3, 3)).toBe('values')
    // Brackets and commas in strings, after escaped quotes and backslashes, are text.
    expect(jsonShapeExcess(bytes(JSON.stringify({ s: '[[[[,,,,"\\\\"[[[[' })), 2, 3)).toBeUndefined()
    expect(jsonShapeExcess(bytes(JSON.stringify(['\\', '[[[[[['])), 1, 3)).toBeUndefined()
    expect(jsonShapeExcess(bytes(JSON.stringify(['"', [[['x']]]])), 3, 100)).toBe('depth')
  })

  it('agrees with the parsed structure for any JSON value (depth and a bound on its values)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const depthOf = (v: unknown): number =>
          v !== null && typeof v === 'object'
            ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depthOf))
            : 0
        const depth = depthOf(value)
        const text = bytes(JSON.stringify(value))
        expect(jsonShapeExcess(text, depth, 1e9)).toBeUndefined()
        if (depth > 0) expect(jsonShapeExcess(text, depth - 1, 1e9)).toBe('depth')
      }),
      { numRuns: 300 },
    )
  })

  it('leaves room for every message of the protocol', () => {
    expect(MAX_BODY_DEPTH).toBeGreaterThanOrEqual(16)
    expect(MAX_BODY_VALUES).toBeGreaterThanOrEqual(1000)
  })
})
