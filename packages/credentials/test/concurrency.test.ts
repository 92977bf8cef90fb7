import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'tsup'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCredentialStore, createKeyResolver, readHandleSecret } from '../src/index.ts'
import { pollUntil, tempStateDir } from './helpers.ts'

// Children are separate Node processes, so they need JavaScript: the current sources are
// bundled once (zod inlined) into a temporary directory. No stale dist/ is ever used.
let bundleDir: string
let bundle: string

beforeAll(async () => {
  bundleDir = await mkdtemp(join(tmpdir(), 'sallyport-credentials-bundle-'))
  await build({
    entry: { index: fileURLToPath(new URL('../src/index.ts', import.meta.url)) },
    outDir: bundleDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    config: false,
    dts: false,
    sourcemap: false,
    splitting: false,
    silent: true,
    noExternal: [/.*/],
  })
  bundle = join(bundleDir, 'index.js')
}, 60_000)

afterAll(async () => {
  await rm(bundleDir, { recursive: true, force: true })
})

interface Outcome {
  op: string
  username?: string
  ok: boolean
  code?: string
  value?: {
    key?: string
    identity?: string
    credentials?: { username: string }[]
    handleSecretCreated?: boolean
  }
}

const SCRIPT = fileURLToPath(new URL('./store-child.mjs', import.meta.url))

function runChild(stateDir: string, ops: object[], startAt: number): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT, bundle, stateDir, JSON.stringify(ops), String(startAt)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.stderr.on('data', (chunk) => {
      err += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`child exited ${code}: ${err}`))
      else resolve(JSON.parse(out) as Outcome[])
    })
  })
}

/** Starts every child now and lets them all begin at the same moment. */
function runConcurrently(stateDir: string, perChild: object[][]): Promise<Outcome[][]> {
  const startAt = Date.now() + 400
  return Promise.all(perChild.map((ops) => runChild(stateDir, ops, startAt)))
}

async function assertNoLeftovers(stateDir: string): Promise<void> {
  const root = join(stateDir, 'credentials')
  const stray = (await readdir(root)).filter((name) => name.startsWith('.') && name !== '.generation')
  expect(stray).toEqual([])
  for (const name of await readdir(root, { withFileTypes: true })) {
    if (name.isDirectory())
      expect((await readdir(join(root, name.name))).sort()).toEqual(['key', 'meta.json'])
  }
}

const ISSUER = 'https://login.example.com'
const CHILDREN = 6

describe('concurrent mutations from several processes', () => {
  it('keeps every add, rotation, policy change and mapping, once each', async () => {
    const stateDir = await tempStateDir()
    const plans = Array.from({ length: CHILDREN }, (_, child) =>
      Array.from({ length: 8 }, (_, n) => {
        const username = `c${child}u${n}`
        return [
          { op: 'add', username, policy: 'chat' },
          { op: 'map', issuer: ISSUER, subject: `sub-${username}`, username },
          ...(n % 2 === 0 ? [{ op: 'rotate', username }] : [{ op: 'setPolicy', username, policy: 'full' }]),
        ]
      }).flat(),
    )
    const outcomes = (await runConcurrently(stateDir, plans)).flat()
    expect(outcomes.filter((o) => !o.ok)).toEqual([])

    const store = createCredentialStore({ stateDir })
    const listed = await store.list()
    const expected = plans
      .flat()
      .filter((op) => op.op === 'add')
      .map((op) => op.username)
    expect(listed.map((c) => c.username).sort()).toEqual([...expected].sort())
    expect(new Set(listed.map((c) => c.identity)).size).toBe(expected.length)
    expect(await store.listOAuthMappings()).toHaveLength(expected.length)

    const resolver = createKeyResolver({ stateDir, watch: false })
    for (const username of expected) {
      const added = outcomes.find((o) => o.op === 'add' && o.username === username)?.value
      const rotated = outcomes.find((o) => o.op === 'rotate' && o.username === username)?.value
      const current = rotated?.key ?? added?.key
      const result = await resolver.resolve(current)
      expect(result).toMatchObject({ ok: true, principal: { username, identity: added?.identity } })
      if (rotated) expect(await resolver.resolve(added?.key)).toMatchObject({ ok: false })
      else expect(result.ok && result.principal.policy).toBe('full')
      expect(await resolver.resolveOAuth(ISSUER, `sub-${username}`)).toMatchObject({ username })
    }
    await assertNoLeftovers(stateDir)
  }, 60_000)

  it('lets exactly one process create a contested username', async () => {
    const stateDir = await tempStateDir()
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo']
    const plans = Array.from({ length: CHILDREN }, () =>
      names.map((username) => ({ op: 'add', username, policy: 'read' })),
    )
    const outcomes = (await runConcurrently(stateDir, plans)).flat()
    for (const username of names) {
      const mine = outcomes.filter((o) => o.username === username)
      expect(mine.filter((o) => o.ok)).toHaveLength(1)
      expect(mine.filter((o) => !o.ok).map((o) => o.code)).toEqual(
        Array(CHILDREN - 1).fill('ERR_CREDENTIALS_EXISTS'),
      )
    }
    const winners = outcomes.filter((o) => o.ok)
    const resolver = createKeyResolver({ stateDir, watch: false })
    for (const winner of winners) expect((await resolver.resolve(winner.value?.key)).ok).toBe(true)
    await assertNoLeftovers(stateDir)
  }, 60_000)

  it('never lets concurrent adds exceed 128 credentials', async () => {
    const stateDir = await tempStateDir()
    const store = createCredentialStore({ stateDir })
    for (let n = 0; n < 120; n++) await store.add(`pre${n}`, 'chat')
    const plans = Array.from({ length: CHILDREN }, (_, child) =>
      Array.from({ length: 4 }, (_, n) => ({ op: 'add', username: `late${child}x${n}`, policy: 'chat' })),
    )
    const outcomes = (await runConcurrently(stateDir, plans)).flat()
    expect(outcomes.filter((o) => o.ok)).toHaveLength(8)
    expect(outcomes.filter((o) => !o.ok).every((o) => o.code === 'ERR_CREDENTIALS_LIMIT')).toBe(true)
    expect(await store.list()).toHaveLength(128)
  }, 60_000)

  it('seeds the stack exactly once when several processes seed at the same time', async () => {
    const stateDir = await tempStateDir()
    const outcomes = (
      await runConcurrently(
        stateDir,
        Array.from({ length: 4 }, () => [{ op: 'seed' }]),
      )
    ).flat()
    const created = outcomes.flatMap((o) => o.value?.credentials?.map((c) => c.username) ?? [])
    expect(created.sort()).toEqual(['discord', 'owner', 'slack'])
    expect(outcomes.filter((o) => o.value?.handleSecretCreated)).toHaveLength(1)
    expect(await readHandleSecret(stateDir)).toHaveLength(32)
  }, 60_000)

  it('shows a credential added by another process to a running resolver within 2 s', async () => {
    const stateDir = await tempStateDir()
    const store = createCredentialStore({ stateDir })
    await store.add('alice', 'full')
    const resolver = createKeyResolver({ stateDir, watch: false })
    expect((await resolver.resolve('k'.repeat(40))).ok).toBe(false)
    const outcomes = await runConcurrently(stateDir, [[{ op: 'add', username: 'bob', policy: 'read' }]])
    const added = outcomes.flat()[0]
    const elapsed = await pollUntil(async () => (await resolver.resolve(added?.value?.key)).ok, {
      timeoutMs: 2_000,
      what: "other process's credential resolves",
    })
    expect(elapsed).toBeLessThan(2_000)
    resolver.close()
  }, 30_000)
})
