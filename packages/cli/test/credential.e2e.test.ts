import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, tempDir } from './cli-process.ts'
import { useTempStack } from './temp-stack.ts'

const stack = useTempStack()

const cli = (...args: string[]) => runCli([...args, '--dir', stack.dir])

describe('sallyport credential (built CLI)', () => {
  it('add prints the key once, alone on stdout, and stores it 0600', async () => {
    const run = await cli('credential', 'add', 'ci-bot', 'read')
    expect(run.code).toBe(0)
    const key = run.stdout.trim()
    expect(run.stdout).toBe(`${key}\n`)
    expect(key).toMatch(/^[\x21-\x7e]{32,512}$/)
    expect(run.stderr).toMatch(/Added ci-bot \(policy read\)/)
    expect(run.stderr).not.toContain(key)
    expect(readFileSync(join(stack.dir, 'state/credentials/ci-bot/key'), 'utf8').trim()).toBe(key)
    // list never shows a key
    const list = await cli('credential', 'list')
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(/ci-bot\s+read/)
    expect(list.stdout).not.toContain(key)
  })

  it('--json output for scripts: add, list, set-policy, rotate, remove', async () => {
    const added = JSON.parse((await cli('credential', 'add', 'json-bot', 'chat', '--json')).stdout)
    expect(added).toMatchObject({ username: 'json-bot', policy: 'chat' })
    const listed = JSON.parse((await cli('credential', 'list', '--json')).stdout)
    const names = listed.credentials.map((c: { username: string }) => c.username)
    expect(names).toEqual([...names].sort())
    expect(names).toEqual(expect.arrayContaining(['owner', 'discord', 'slack', 'json-bot']))
    expect(JSON.stringify(listed)).not.toContain(added.key)
    const policy = JSON.parse((await cli('credential', 'set-policy', 'json-bot', 'full', '--json')).stdout)
    expect(policy).toMatchObject({ username: 'json-bot', policy: 'full' })
    const rotated = JSON.parse((await cli('credential', 'rotate', 'json-bot', '--json')).stdout)
    expect(rotated.key).not.toBe(added.key)
    expect(rotated.policy).toBe('full')
    expect(JSON.parse((await cli('credential', 'remove', 'json-bot', '--json')).stdout)).toEqual({
      removed: 'json-bot',
    })
  })

  it('maps an OAuth subject and lists the mapping', async () => {
    const run = await cli('credential', 'map', 'oauth', 'https://id.example.com', 'sub-123', 'owner')
    expect(run.code).toBe(0)
    const listed = JSON.parse((await cli('credential', 'list', '--json')).stdout)
    expect(listed.oauthMappings).toEqual([
      { issuer: 'https://id.example.com', subject: 'sub-123', username: 'owner' },
    ])
  })

  it.each([
    [['credential', 'add', 'owner', 'chat'], 5, /already exists/],
    [['credential', 'rotate', 'nobody'], 4, /no credential named nobody/],
    [['credential', 'add', 'Bad Name', 'chat'], 2, /username/i],
    [['credential', 'add', 'x1', 'root'], 2, /Invalid values|choices/i],
    [['credential', 'map', 'oauth', 'https://id.example.com', 's', 'nobody'], 4, /nobody/],
    [['credential', 'frobnicate'], 2, /Unknown argument|Did you mean/i],
  ])('%j fails with exit %i and one clear line', async (args, code, pattern) => {
    const run = await cli(...args)
    expect(run.code).toBe(code)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(pattern)
    expect(run.stderr).not.toMatch(/\n\s+at /) // no stack trace
  })

  it('refuses to work outside a stack (exit 3) instead of creating one', async () => {
    const temp = tempDir()
    try {
      const run = await runCli(['credential', 'add', 'x', 'chat', '--dir', join(temp.path, 'nowhere')])
      expect(run.code).toBe(3)
      expect(run.stderr).toMatch(/^sallyport: no stack at .*run `sallyport init/)
    } finally {
      temp.remove()
    }
  })

  it('concurrent adds all succeed with distinct keys; concurrent adds of one name: exactly one wins', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `par-${i}`)
    const runs = await Promise.all(names.map((name) => cli('credential', 'add', name, 'chat')))
    expect(runs.map((r) => r.code)).toEqual(names.map(() => 0))
    expect(new Set(runs.map((r) => r.stdout.trim())).size).toBe(names.length)
    const same = await Promise.all(
      Array.from({ length: 6 }, () => cli('credential', 'add', 'contested', 'read')),
    )
    expect(same.filter((r) => r.code === 0)).toHaveLength(1)
    expect(same.filter((r) => r.code === 5)).toHaveLength(5)
    const listed = JSON.parse((await cli('credential', 'list', '--json')).stdout)
    const listedNames = listed.credentials.map((c: { username: string }) => c.username)
    for (const name of [...names, 'contested']) expect(listedNames).toContain(name)
    // concurrent rotations of one credential: each succeeds, the stored key is one of the printed ones
    const rotations = await Promise.all(
      Array.from({ length: 4 }, () => cli('credential', 'rotate', 'contested')),
    )
    expect(rotations.map((r) => r.code)).toEqual([0, 0, 0, 0])
    const stored = readFileSync(join(stack.dir, 'state/credentials/contested/key'), 'utf8').trim()
    expect(rotations.map((r) => r.stdout.trim())).toContain(stored)
    // 19 CLI processes, 18 of them at once: seconds on a quiet machine, far more on a busy one.
  }, 120_000)
})

describe('sallyport config oauth (built CLI)', () => {
  const base = [
    '--resource',
    'https://gw.example.com/mcp',
    '--issuer',
    'https://id.example.com',
    '--jwks-url',
    'https://id.example.com/jwks.json',
    '--audience',
    'https://gw.example.com/mcp',
  ]

  it('writes the oauth section with RS256 by default and keeps the other settings', async () => {
    const before = JSON.parse(readFileSync(join(stack.dir, 'sallyport.json'), 'utf8'))
    const run = await cli('config', 'oauth', ...base, '--scopes', 'mcp:tools,mcp:read')
    expect(run.code).toBe(0)
    const after = JSON.parse(readFileSync(join(stack.dir, 'sallyport.json'), 'utf8'))
    expect(after.oauth).toEqual({
      resource: 'https://gw.example.com/mcp',
      issuer: 'https://id.example.com',
      jwksUrl: 'https://id.example.com/jwks.json',
      audience: 'https://gw.example.com/mcp',
      scopes: ['mcp:tools', 'mcp:read'],
      algorithms: ['RS256'],
    })
    expect(after.gateway).toEqual(before.gateway)
    const es = await cli('config', 'oauth', ...base, '--algorithms', 'ES256', 'EdDSA')
    expect(es.code).toBe(0)
    expect(JSON.parse(readFileSync(join(stack.dir, 'sallyport.json'), 'utf8')).oauth.algorithms).toEqual([
      'ES256',
      'EdDSA',
    ])
  })

  it.each([
    [['--resource', 'http://gw.example.com/mcp'], /--resource: must be an https:\/\/ URL/],
    [['--jwks-url', 'http://id.example.com/jwks'], /--jwks-url: must be an https:\/\/ URL/],
    [['--algorithms', 'HS256'], /--algorithms/],
  ])('refuses %j (exit 2) and leaves sallyport.json unchanged', async (override, pattern) => {
    const before = readFileSync(join(stack.dir, 'sallyport.json'), 'utf8')
    const args = [...base]
    for (let i = 0; i < override.length; i += 2) {
      const at = args.indexOf(override[i]!)
      if (at >= 0) args[at + 1] = override[i + 1]!
      else args.push(override[i]!, override[i + 1]!)
    }
    const run = await cli('config', 'oauth', ...args)
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(pattern)
    expect(readFileSync(join(stack.dir, 'sallyport.json'), 'utf8')).toBe(before)
  })
})
