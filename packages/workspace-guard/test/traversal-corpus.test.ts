import { readFileSync, writeFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorkspaceGuard, GuardError, type WorkspaceGuard } from '../src/index.ts'
import { createWorkspaceFixture, type WorkspaceFixture } from './helpers/workspace-fixture.ts'

const CANARY_NAME = 'outside-canary.txt'

/** The corpus, `{FILE}` replaced by a canary name that exists at every level above the root. */
function payloads(): string[] {
  return readFileSync(join(import.meta.dirname, 'fixtures', 'traversal-payloads.txt'), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.replaceAll('{FILE}', CANARY_NAME))
}

/** Each payload raw and, when it decodes, URL-decoded once. */
function variants(payload: string): string[] {
  try {
    const decoded = decodeURIComponent(payload)
    return decoded === payload ? [payload] : [payload, decoded]
  } catch {
    return [payload] // `%u2215`, `%%32%65`: not valid percent-encoding
  }
}

let fx: WorkspaceFixture
let guard: WorkspaceGuard
let etcPasswd = ''

beforeAll(() => {
  // root at base/l1/l2/l3/root; a canary at every level above it, so `../`, `../../`, … all hit one.
  fx = createWorkspaceFixture(['l1', 'l2', 'l3', 'root'])
  for (const level of ['', 'l1', 'l1/l2', 'l1/l2/l3'])
    writeFileSync(join(fx.base, level, CANARY_NAME), fx.canary)
  fx.write('inside.txt', 'inside\n')
  guard = createWorkspaceGuard({ root: fx.root })
  etcPasswd = readFileSync('/etc/passwd', 'utf8')
})

afterAll(() => fx.remove())

describe('traversal corpus (PayloadsAllTheThings)', () => {
  const corpus = payloads()

  it('has the whole corpus', () => {
    expect(corpus.length).toBeGreaterThan(250)
  })

  it('check rejects every payload, or resolves it inside the root', () => {
    for (const payload of corpus) {
      for (const variant of variants(payload)) {
        const result = guard.check(variant)
        if (!result.ok) continue
        const resolved = posix.resolve(fx.root, result.path)
        expect(resolved.startsWith(`${fx.root}/`), JSON.stringify(variant)).toBe(true)
      }
    }
  })

  it('read never returns a canary outside the root nor /etc/passwd, raw or URL-decoded once', async () => {
    let refused = 0
    let tried = 0
    for (const payload of corpus) {
      for (const variant of variants(payload)) {
        tried += 1
        try {
          const { text } = await guard.read(variant)
          expect(text, JSON.stringify(variant)).not.toContain(fx.canary)
          expect(text).not.toBe(etcPasswd)
        } catch (error) {
          expect(GuardError.isInstance(error), String(error)).toBe(true)
          refused += 1
        }
      }
    }
    // The canary exists at every level: a single successful escape would have been read above.
    expect(tried).toBeGreaterThan(300)
    expect(refused).toBe(tried)
  })
})

describe('fast-check: arbitrary segment sequences against a real tree', () => {
  const segment = fc.oneof(
    fc.constantFrom('..', '.', '', '...', '%2e%2e', '%2e', '\uff0e\uff0e', '\u2024\u2024', '\u2025', '..%2f'),
    fc.constantFrom('l1', 'l2', 'l3', 'root', 'inside.txt', CANARY_NAME, '..;', '\\..'),
    fc.string({ maxLength: 4 }),
  )
  const path = fc
    .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 10 }))
    .map(([absolute, segments]) => (absolute ? '/' : '') + segments.join('/'))

  it('read either refuses or returns content from inside the root', async () => {
    await fc.assert(
      fc.asyncProperty(path, async (candidate) => {
        const result = await guard.read(candidate).catch((error: unknown) => {
          expect(GuardError.isInstance(error)).toBe(true)
          return undefined
        })
        if (result !== undefined) expect(result.text).toBe('inside\n')
      }),
      { numRuns: 1000 },
    )
  })
})
