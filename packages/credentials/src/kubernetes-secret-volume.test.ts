import { lstat, mkdir, mkdtemp, readdir, readlink, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { setImmediate } from 'node:timers'
import { Worker } from 'node:worker_threads'
import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { codeOf, pollUntil, tempStateDir } from '../test/helpers.ts'
import { projectVolumeSync } from '../test/kubelet-atomic-writer.mjs'
import { createCredentialStore } from './credential-store.ts'
import type { CredentialError } from './errors.ts'
import { readHandleSecret } from './handle-secret.ts'
import { createKeyResolver, type KeyResolverOptions } from './key-resolver.ts'

// A Kubernetes Secret (or projected) volume mounted at `state/credentials`, as the kubelet writes
// it (pkg/volume/util/atomic_writer.go): every file of the payload lives in a hidden timestamped
// directory `..2006_01_02_15_04_05.<digits>`; `..data` is a symlink to it; each first path
// component of the payload is a symlink `<name> -> ..data/<name>` (so a credential directory
// `owner/` is a symlink to a directory). An update writes a new timestamped directory, creates
// the links of new names, swaps `..data` by renaming `..data_tmp` over it (atomic), removes the
// links of names no longer in the payload and deletes the old directory. File modes come from
// `defaultMode`/`mode`; with an `fsGroup` the kubelet ORs in 0440, so 0440 is what a non-root
// pod reads (owned by root, group fsGroup: the ownership itself needs root and is not built here).
// deploy/kubernetes mounts the credentials exactly like this.

// readFile as the store calls it, with a hook that runs just before one chosen file is read: the
// kubelet's swap is put exactly between two reads of one snapshot. Without a hook, the real one.
const beforeRead = vi.hoisted(() => ({ hooks: new Map<string, () => void>() }))
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>()
  const readFile = ((path: unknown, ...rest: unknown[]) => {
    const hook = typeof path === 'string' ? beforeRead.hooks.get(path) : undefined
    if (hook) {
      beforeRead.hooks.delete(path as string)
      hook()
    }
    return (actual.readFile as (...args: unknown[]) => unknown)(path, ...rest)
  }) as typeof actual.readFile
  return { ...actual, readFile, default: { ...actual, readFile } }
})

/** The resolver's documented hot-reload bound: a change is seen within 2 s without a restart. */
const RELOAD_BOUND_MS = 2_000
const MODE = 0o440

const KEYS = {
  owner: 'k8s-owner-key-0000000000000000000000000001',
  ownerRotated: 'k8s-owner-key-0000000000000000000000000002',
  discord: 'k8s-discord-key-00000000000000000000000001',
  ci: 'k8s-ci-key-000000000000000000000000000000001',
}

function meta(identity: string, policy: 'chat' | 'read' | 'full', rotatedAt: string | null = null): string {
  return `${JSON.stringify({
    version: 1,
    identity,
    policy,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: rotatedAt ?? '2026-01-01T00:00:00.000Z',
    rotatedAt,
  })}\n`
}

const OWNER_ID = 'id_AAAAAAAAAAAAAAAAAAAAAA'
const DISCORD_ID = 'id_BBBBBBBBBBBBBBBBBBBBBB'
const CI_ID = 'id_CCCCCCCCCCCCCCCCCCCCCC'

/** The payload of a credentials volume: `<username>/key` and `<username>/meta.json` per credential. */
type Payload = Record<string, string>

function credential(username: string, key: string, metaText: string): Payload {
  return { [`${username}/key`]: key, [`${username}/meta.json`]: metaText }
}

/** One kubelet update of the volume at `target` (see test/kubelet-atomic-writer.mjs). */
async function projectVolume(target: string, payload: Payload): Promise<void> {
  projectVolumeSync(target, payload, MODE)
}

async function setup(payload: Payload, options: Partial<KeyResolverOptions> = {}) {
  const stateDir = await tempStateDir()
  const root = join(stateDir, 'credentials')
  await projectVolume(root, payload)
  const errors: CredentialError[] = []
  const resolver = createKeyResolver({ stateDir, onReloadError: (error) => errors.push(error), ...options })
  onTestFinished(() => resolver.close())
  return { stateDir, root, resolver, errors }
}

const initial: Payload = {
  ...credential('owner', KEYS.owner, meta(OWNER_ID, 'full')),
  ...credential('discord', KEYS.discord, meta(DISCORD_ID, 'chat')),
}

describe('the credential store mounted from a Kubernetes Secret volume', () => {
  it('the layout built here is the kubelet one: symlinked credential directories, a ..data link, 0440 files', async () => {
    const { root } = await setup(initial)
    const entries = (await readdir(root)).sort()
    expect(entries.filter((name) => !name.startsWith('..'))).toEqual(['discord', 'owner'])
    expect(entries).toContain('..data')
    expect(
      entries.filter((name) => /^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d+$/.test(name)),
    ).toHaveLength(1)
    expect((await lstat(join(root, 'owner'))).isSymbolicLink()).toBe(true)
    expect(await readlink(join(root, 'owner'))).toBe('..data/owner')
    expect((await lstat(join(root, 'owner', 'key'))).mode & 0o777).toBe(MODE)
  })

  it('resolves every key, with its policy and identity, and lists the credentials', async () => {
    const { stateDir, resolver, errors } = await setup(initial)
    expect(await resolver.resolve(KEYS.owner)).toEqual({
      ok: true,
      principal: { username: 'owner', identity: OWNER_ID, policy: 'full' },
    })
    expect(await resolver.resolve(KEYS.discord)).toMatchObject({
      ok: true,
      principal: { username: 'discord', policy: 'chat' },
    })
    expect(await resolver.resolve(KEYS.ci)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    // The operator's read-only views work on the volume too (`sallyport credential list` in a pod).
    const store = createCredentialStore({ stateDir })
    expect((await store.list()).map((c) => c.username)).toEqual(['discord', 'owner'])
    expect(await store.get('owner')).toMatchObject({ identity: OWNER_ID, policy: 'full' })
    expect(errors).toEqual([])
  })

  it.each([
    ['with fs.watch (the default)', true],
    ['by interval alone (watch: false, the longest interval)', false],
  ])(
    'sees a rotation made by swapping ..data within the reload bound, %s; the old key stops working',
    async (_name, watch) => {
      const { root, resolver, errors } = await setup(initial, {
        watch,
        ...(watch ? {} : { reloadIntervalMs: 1_500 }),
      })
      expect(await resolver.resolve(KEYS.owner)).toMatchObject({ ok: true })
      const before = await readlink(join(root, '..data'))

      // The rotated Secret: the key changes, the identity stays (`sallyport credential rotate`).
      await projectVolume(root, {
        ...initial,
        ...credential('owner', KEYS.ownerRotated, meta(OWNER_ID, 'full', '2026-02-01T00:00:00.000Z')),
      })
      expect(await readlink(join(root, '..data'))).not.toBe(before)
      expect(await readdir(root)).not.toContain(before) // the old directory is gone, as with the kubelet

      const seenAfterMs = await pollUntil(async () => (await resolver.resolve(KEYS.ownerRotated)).ok, {
        timeoutMs: RELOAD_BOUND_MS,
        what: 'the rotated key to resolve',
      })
      expect(seenAfterMs).toBeLessThanOrEqual(RELOAD_BOUND_MS)
      expect(await resolver.resolve(KEYS.ownerRotated)).toEqual({
        ok: true,
        principal: { username: 'owner', identity: OWNER_ID, policy: 'full' },
      })
      expect(await resolver.resolve(KEYS.owner)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
      // Untouched credentials keep working across the swap.
      expect(await resolver.resolve(KEYS.discord)).toMatchObject({ ok: true })
      expect(errors).toEqual([])
    },
  )

  it('sees a credential added to and one removed from the Secret', async () => {
    const { root, resolver, errors } = await setup(initial)
    expect(await resolver.resolve(KEYS.discord)).toMatchObject({ ok: true })
    await projectVolume(root, {
      ...credential('owner', KEYS.owner, meta(OWNER_ID, 'full')),
      ...credential('ci', KEYS.ci, meta(CI_ID, 'read')),
    })
    expect(await readdir(root)).not.toContain('discord') // the kubelet prunes the link
    await pollUntil(async () => (await resolver.resolve(KEYS.ci)).ok, {
      timeoutMs: RELOAD_BOUND_MS,
      what: 'the added credential to resolve',
    })
    expect(await resolver.resolve(KEYS.ci)).toMatchObject({ ok: true, principal: { policy: 'read' } })
    expect(await resolver.resolve(KEYS.discord)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    expect(await resolver.resolve(KEYS.owner)).toMatchObject({ ok: true })
    expect(errors).toEqual([])
  })

  it('never serves a mix of two versions: a swap between the reads of one snapshot makes the resolver read again', async () => {
    // Version A: owner has key 1 and policy full. Version B: key 2 and policy chat. The swap to B
    // happens after owner's meta.json (A: full) was read and before its key (B: key 2): a snapshot
    // taken as read would let key 2 act with policy full.
    const { root, resolver, errors } = await setup(initial)
    const versionB = {
      ...initial,
      ...credential('owner', KEYS.ownerRotated, meta(OWNER_ID, 'chat', '2026-02-01T00:00:00.000Z')),
    }
    let swapped = false
    beforeRead.hooks.set(join(root, 'owner', 'key'), () => {
      projectVolumeSync(root, versionB, MODE)
      swapped = true
    })
    onTestFinished(() => beforeRead.hooks.clear())
    // The first read of the store: A's meta.json, then (after the swap) B's key.
    const first = await resolver.resolve(KEYS.ownerRotated)
    expect(swapped).toBe(true)
    expect(first).toEqual({
      ok: true,
      principal: { username: 'owner', identity: OWNER_ID, policy: 'chat' },
    })
    expect(await resolver.resolve(KEYS.owner)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    expect(errors).toEqual([])
  })

  it('never refuses a key that every version of the Secret holds while the kubelet swaps it from another thread', async () => {
    const { root, resolver, errors } = await setup(initial, { reloadIntervalMs: 1 })
    // Versions differing in owner's key; discord's is the same in all.
    const ownerKey = (n: number): string => `k8s-owner-key-${String(n).padStart(28, '0')}`
    const payloads = [0, 1, 2].map((n) => ({
      ...initial,
      ...credential('owner', ownerKey(n), meta(OWNER_ID, 'full')),
    }))
    const rounds = 100
    const kubelet = new Worker(new URL('../test/kubelet-atomic-writer.mjs', import.meta.url), {
      workerData: { role: 'kubelet', target: root, payloads, rounds, gapMs: 5 },
    })
    onTestFinished(async () => {
      await kubelet.terminate()
    })
    const done = new Promise<void>((resolve, reject) => {
      kubelet.once('message', () => resolve())
      kubelet.once('error', reject)
    })
    let finished = false
    const stop = (): void => {
      finished = true
    }
    done.then(stop, stop)
    let reads = 0
    let refused = 0
    while (!finished) {
      reads++
      if (!(await resolver.resolve(KEYS.discord)).ok) refused++
      // A resolve between reloads settles in microtasks alone: let the worker's message in.
      await new Promise((resolve) => setImmediate(resolve))
    }
    await done
    expect(reads).toBeGreaterThan(rounds) // the reads overlapped the swaps
    expect(refused).toBe(0)
    expect(errors.map((error) => error.message)).toEqual([])
    // After the last swap: the last version's owner key resolves, the one before does not.
    await pollUntil(async () => (await resolver.resolve(ownerKey((rounds - 1) % 3))).ok, {
      timeoutMs: RELOAD_BOUND_MS,
      what: "the last version's key to resolve",
    })
    expect(await resolver.resolve(ownerKey((rounds - 2) % 3))).toMatchObject({ ok: false })
  })
})

describe('what stays refused (the checks of an ordinary stack are unchanged)', () => {
  it('a symlinked credential directory outside the kubelet layout is still ignored', async () => {
    const stateDir = await tempStateDir()
    const store = createCredentialStore({ stateDir })
    const owner = await store.add('owner', 'full')
    const root = join(stateDir, 'credentials')
    // Planted next to the store: a directory elsewhere, linked in under a valid username.
    const elsewhere = await mkdtemp(join(dirname(stateDir), 'elsewhere-'))
    await mkdir(join(elsewhere, 'mallory'))
    await writeFile(join(elsewhere, 'mallory', 'key'), KEYS.ci)
    await writeFile(join(elsewhere, 'mallory', 'meta.json'), meta(CI_ID, 'full'))
    await symlink(join(elsewhere, 'mallory'), join(root, 'mallory'))
    // Also one that imitates the link text without a kubelet `..data`.
    await symlink(join('..data', 'eve'), join(root, 'eve'))
    const resolver = createKeyResolver({ stateDir, onReloadError: () => {} })
    onTestFinished(() => resolver.close())
    expect(await resolver.resolve(owner.key)).toMatchObject({ ok: true })
    expect(await resolver.resolve(KEYS.ci)).toMatchObject({ ok: false, code: 'ERR_CREDENTIALS_UNKNOWN' })
    expect((await store.list()).map((c) => c.username)).toEqual(['owner'])
  })

  it('in a kubelet layout, a link that does not point at ..data/<its own name> is ignored', async () => {
    const { root, resolver } = await setup(initial)
    await symlink(join('..data', 'owner'), join(root, 'alias')) // another name for owner's directory
    const store = createCredentialStore({ stateDir: dirname(root) })
    expect((await store.list()).map((c) => c.username)).toEqual(['discord', 'owner'])
    expect(await resolver.resolve(KEYS.owner)).toMatchObject({ ok: true, principal: { username: 'owner' } })
  })

  it('the handle secret is not read from a Secret volume: a symlink, group-readable (the manifests copy it to a 0600 file)', async () => {
    const stateDir = await tempStateDir()
    await projectVolume(stateDir, { 'handle-secret': 'x'.repeat(32) })
    expect(await codeOf(() => readHandleSecret(stateDir))).toBe('ERR_CREDENTIALS_SECRET_INVALID')
    // Reached through ..data, the file itself is regular but 0440: still refused.
    expect(await codeOf(() => readHandleSecret(join(stateDir, '..data')))).toBe(
      'ERR_CREDENTIALS_SECRET_INSECURE',
    )
  })
})
