import { beforeAll, describe, expect, it } from 'vitest'
import { expectNoLeaks, useHarness, writeWorkspace } from './harness.js'
import { expectShape, WorkspaceReadShape, WorkspaceSearchShape } from './shapes.js'

// gateway.workspace.search and gateway.workspace.read for read and full (chat does not have
// them: see catalog.test.ts). The workspace tools never touch the agent runtime.

const h = useHarness()
const WHO = ['read', 'full'] as const

beforeAll(async () => {
  await writeWorkspace(h.creds.workspace)
})

async function search(who: 'read' | 'full', args: Record<string, unknown>) {
  const out = await h.clients[who].call('gateway.workspace.search', args)
  expect(out.kind === 'result' && !out.isError, JSON.stringify(out)).toBe(true)
  return {
    result: expectShape(WorkspaceSearchShape, out.kind === 'result' ? out.structured : undefined),
    text: out.kind === 'result' ? out.text : '',
  }
}

describe('gateway.workspace.search', () => {
  it.each(WHO)('%s finds files by name', async (who) => {
    const { result, text } = await search(who, { mode: 'files', query: 'app' })
    expect(result).toEqual({ matches: [{ path: 'src/app.ts' }], truncated: false })
    expect(text).toContain('src/app.ts')
  })

  it.each(WHO)('%s finds text with line, column and preview, and never inside secret files', async (who) => {
    const mark = h.fake.requests.length
    const { result } = await search(who, { mode: 'text', query: 'needle' })
    const paths = result.matches.map((m) => m.path).sort()
    expect(paths).toEqual(['README.md', 'src/app.ts', 'src/lib/util.ts'])
    const app = result.matches.find((m) => m.path === 'src/app.ts')
    expect(app).toMatchObject({
      line: 2,
      column: expect.any(Number),
      preview: expect.stringContaining('needle'),
    })
    expect(JSON.stringify(result)).not.toContain('needle-secret-value')
    expect(h.requestsSince(mark)).toEqual([])
  })

  it.each(WHO)('%s finds symbol definitions', async (who) => {
    const { result } = await search(who, { mode: 'symbols', query: 'computeTotal' })
    expect(result.matches).toEqual([
      expect.objectContaining({ path: 'src/app.ts', line: 1, kind: 'function', name: 'computeTotal' }),
    ])
  })

  it('honours limit and reports truncation', async () => {
    const { result } = await search('read', { mode: 'text', query: 'needle', limit: 1 })
    expect(result.matches).toHaveLength(1)
    expect(result.truncated).toBe(true)
  })

  it('finds nothing in .env even when the query is its secret', async () => {
    const { result, text } = await search('full', { mode: 'text', query: 'needle-secret-value' })
    expect(result).toEqual({ matches: [], truncated: false })
    expect(JSON.parse(text)).toEqual({ matches: [], truncated: false })
  })

  it('answers a query the guard refuses (control characters) with invalid_input', async () => {
    expect(
      await h.clients.read.errorCode('gateway.workspace.search', { mode: 'text', query: 'a\u0000b' }),
    ).toBe('invalid_input')
  })
})

describe('gateway.workspace.read', () => {
  it.each(WHO)('%s reads a text file with its media type', async (who) => {
    const out = await h.clients[who].call('gateway.workspace.read', { path: 'src/app.ts' })
    expect(out.kind === 'result' && !out.isError).toBe(true)
    if (out.kind !== 'result') return
    const file = expectShape(WorkspaceReadShape, out.structured)
    expect(file).toEqual({
      path: 'src/app.ts',
      text: expect.stringContaining('export function computeTotal'),
      mimeType: expect.stringMatching(/typescript|text\/plain/),
      truncated: false,
    })
    expect(JSON.parse(out.text)).toEqual(file)
  })

  it.each([
    ['.env', 'path_denied'],
    ['../outside.txt', 'path_denied'],
    ['/etc/passwd', 'path_denied'],
    ['src/../../x', 'path_denied'],
    ['.git/config', 'path_denied'],
    ['id_rsa', 'path_denied'],
    ['src/missing.ts', 'not_found'],
    ['big.txt', 'too_large'],
    ['image.bin', 'not_text'],
  ])('refuses %s with %s and says nothing about the host', async (path, code) => {
    const out = await h.clients.full.call('gateway.workspace.read', { path })
    expect(out).toMatchObject({ kind: 'result', isError: true, error: { code } })
    const text = JSON.stringify(out)
    expect(text).not.toContain(h.creds.workspace)
    expect(text).not.toContain('needle-secret-value')
  })

  it('reads .env.example, which the rules allow', async () => {
    expect(await h.clients.read.ok('gateway.workspace.read', { path: '.env.example' })).toMatchObject({
      text: 'API_TOKEN=\n',
    })
  })
})

describe('leaks', () => {
  it('never sent the runtime credential in any response or log line', async () => {
    // The workspace tools create no upstream object: make one so the scan has ids to look for.
    await h.clients.read.ok('gateway.agent.run', { message: 'hello', waitMs: 0 })
    expectNoLeaks(h)
  })
})
