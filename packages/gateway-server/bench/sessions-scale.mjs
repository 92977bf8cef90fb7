// Session listing and deletion at scale (`pnpm bench:sessions`): the gateway in a process of its
// own in front of the real runtime holding N sessions (default 10 000), of which about 50 belong
// to the measured credential, the rest to other credentials (their ownership record is one this
// credential cannot verify) or to nobody (created directly upstream). Loopback only and bounded
// in time. Prints p50 over several repetitions of:
//   gateway.session.list limit 20 (first page, and the page after it through its cursor),
//   one direct full upstream listing, one direct 20-session upstream page,
//   gateway.session.delete and one direct upstream DELETE,
// their ratios, and the gateway's RSS before and after the listings, as one JSON object.
//
//   node bench/sessions-scale.mjs                          # 10 000 sessions, 7 repetitions
//   node bench/sessions-scale.mjs --sessions 2000 --reps 5 --owned 50
//   node bench/sessions-scale.mjs --compare /path/to/other/gateway-server
//       a second gateway, built elsewhere (e.g. the base commit's dist), started the same way from
//       that directory's bench/gateway-process.mjs, measured in the same repetitions against the
//       same runtime and sessions: before/after figures under the same machine load
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCredentialStore } from '@sallyport/credentials'
import { createOwnershipSigner } from '@sallyport/handles'
import { startStack } from '@sallyport/testkit'
import { connect, memoryMiB, quantile, spawnWithPort } from './support.mjs'

const argv = process.argv.slice(2)
const flag = (name, fallback) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? Number(argv[i + 1]) : fallback
}
const COMPARE = argv.includes('--compare') ? argv[argv.indexOf('--compare') + 1] : undefined
const SESSIONS = flag('sessions', 10_000)
const OWNED = flag('owned', 50)
const REPS = flag('reps', 7)
/** Sessions deleted through the gateway (and as many directly), one per repetition. */
const DELETES = flag('deletes', 5)
/** Requests in flight while the sessions are created. */
const CONCURRENCY = flag('concurrency', 16)
/** The whole run is cut off after this many seconds. */
const BUDGET_S = flag('budget', 1_200)
/** Share of the other sessions that carry another credential's ownership record. */
const FOREIGN_RECORD_SHARE = 0.8

const budget = setTimeout(() => {
  console.error(`sessions-scale: over its budget of ${BUDGET_S} s, stopping`)
  process.exit(2)
}, BUDGET_S * 1000)
budget.unref()

async function rssMiB(pid) {
  const { rss, peak } = await memoryMiB(pid)
  return { rss: Math.round(rss), peak: Math.round(peak) }
}

const p50 = (values) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  )
const round = (v) => Math.round(v * 10) / 10
const ratio = (a, b) => Number((a / b).toFixed(2))

/** Runs `fn` for every item with at most `n` in flight. */
async function pool(items, n, fn) {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        await fn(items[i], i)
      }
    }),
  )
}

const stateDir = await mkdtemp(join(tmpdir(), 'sallyport-sessions-'))
const stack = await startStack()
const children = []
const results = { config: { sessions: SESSIONS, owned: OWNED, reps: REPS, deletes: DELETES } }
try {
  const secret = randomBytes(32)
  const signer = createOwnershipSigner({ secret: new Uint8Array(secret) })
  const store = createCredentialStore({ stateDir })
  const { key } = await store.add('measured', 'full')
  const identity = (await store.get('measured')).identity
  store.close?.()
  const runtime = {
    baseUrl: stack.runtime.url,
    username: stack.runtime.username,
    password: stack.runtime.password,
    directory: stack.runtime.directory,
  }

  // ---- the runtime, directly ----
  const direct = async (method, path, body) => {
    const url = new URL(path, stack.runtime.url)
    url.searchParams.set('directory', stack.runtime.directory)
    const res = await fetch(url, {
      method,
      headers: { authorization: stack.runtime.authHeader, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    if (!res.ok) throw new Error(`${method} ${url.pathname}: HTTP ${res.status}`)
    return res.json()
  }

  // ---- N sessions, the measured credential's spread evenly among them ----
  // Others: one POST each, with a record shaped like another credential's (so verifying it costs
  // what a real one does) or with none. Owned: POST, then PATCH with this credential's record,
  // the two steps the gateway itself takes (`createOwnedSession`). The creation order is the
  // order of `updated`, so the owned ones end up spread over the whole listing.
  const createStart = performance.now()
  const stride = Math.max(1, Math.floor(SESSIONS / (OWNED + DELETES)))
  const plan = Array.from({ length: SESSIONS }, (_, i) =>
    i % stride === stride - 1 ? 'owned' : i % 5 < FOREIGN_RECORD_SHARE * 5 ? 'foreign' : 'plain',
  )
  const foreignIds = []
  await pool(plan, CONCURRENCY, async (kind, i) => {
    const metadata =
      kind === 'foreign' ? { sallyport: { v: 1, mac: randomBytes(32).toString('base64url') } } : undefined
    const session = await direct('POST', '/session', {
      title: `bench ${kind} ${i}`,
      ...(metadata && { metadata }),
    })
    if (kind === 'owned')
      await direct('PATCH', `/session/${session.id}`, {
        metadata: { sallyport: await signer.sign(session.id, identity) },
      })
    else foreignIds.push(session.id)
  })
  results.createSeconds = round((performance.now() - createStart) / 1000)

  // ---- the gateway(s), each in a process of its own ----
  const gateways = []
  const startGateway = async (label, dir) => {
    const { child, port } = await spawnWithPort([
      join(dir, 'bench', 'gateway-process.mjs'),
      JSON.stringify({ stateDir, secretHex: secret.toString('hex'), runtime }),
    ])
    children.push(child)
    const client = await connect(`http://127.0.0.1:${port}`, key, { name: `sessions-scale-${label}` })
    const call = async (name, args) => {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
      if (result.isError) throw new Error(`${name}: ${result.content?.[0]?.text}`)
      return result.structuredContent
    }
    return { label, child, client, call }
  }
  gateways.push(await startGateway('this', join(import.meta.dirname, '..')))
  if (COMPARE) gateways.push(await startGateway('compare', COMPARE))
  const timed = async (fn) => {
    const t = performance.now()
    const value = await fn()
    return { ms: performance.now() - t, value }
  }

  // A few sessions made by the gateway itself (newest): gateway.agent.run on the scripted model.
  for (let i = 0; i < 2; i++) {
    const marker = stack.model.script([{ text: `bench ${i}` }])
    const run = await gateways[0].call('gateway.agent.run', { message: `bench ${marker}`, waitMs: 10_000 })
    if (run.status !== 'completed') throw new Error(`agent.run ended ${run.status}`)
  }
  const total = (await direct('GET', `/session?roots=true&limit=${SESSIONS * 2}`)).length
  results.upstreamSessions = total

  // Warm-up (connections, JIT), then the RSS baseline.
  await direct('GET', '/session?roots=true&limit=20')
  for (const gw of gateways) {
    await gw.call('gateway.session.list', { limit: 20 })
    gw.rss = { beforeListings: await rssMiB(gw.child.pid) }
    gw.samples = { firstPage: [], cursorPage: [] }
  }

  // ---- listings: each repetition measures every gateway and both direct reads ----
  const direct50 = { directFull: [], directPage20: [] }
  for (let rep = 0; rep < REPS; rep++) {
    for (const gw of gateways) {
      const first = await timed(() => gw.call('gateway.session.list', { limit: 20 }))
      gw.samples.firstPage.push(first.ms)
      gw.firstPage = first.value
      if (!gw.firstPage.nextCursor) throw new Error('the first page has no nextCursor')
      const next = await timed(() =>
        gw.call('gateway.session.list', { limit: 20, cursor: gw.firstPage.nextCursor }),
      )
      gw.samples.cursorPage.push(next.ms)
      gw.cursorPage = next.value
    }
    direct50.directFull.push((await timed(() => direct('GET', `/session?roots=true&limit=${total + 1}`))).ms)
    direct50.directPage20.push((await timed(() => direct('GET', '/session?roots=true&limit=20'))).ms)
  }
  const directMs = Object.fromEntries(Object.entries(direct50).map(([k, v]) => [k, round(p50(v))]))
  results.directMsP50 = directMs
  for (const gw of gateways) {
    gw.rss.afterListings = await rssMiB(gw.child.pid)
    const l = Object.fromEntries(Object.entries(gw.samples).map(([k, v]) => [k, round(p50(v))]))
    results[gw.label] = {
      pages: { first: gw.firstPage.sessions.length, cursor: gw.cursorPage.sessions.length },
      listMsP50: l,
      listRatios: {
        firstPageVsDirectFull: ratio(l.firstPage, directMs.directFull),
        cursorPageVsDirectFull: ratio(l.cursorPage, directMs.directFull),
        firstPageVsDirectPage20: ratio(l.firstPage, directMs.directPage20),
        cursorPageVsDirectPage20: ratio(l.cursorPage, directMs.directPage20),
      },
      gatewayRssMiB: gw.rss,
    }
  }

  // ---- deletes: owned sessions through each gateway, others directly, interleaved ----
  const toDelete = gateways.map((gw, g) =>
    [...gw.firstPage.sessions, ...gw.cursorPage.sessions]
      .map((s) => s.session)
      .slice(-(g + 1) * DELETES)
      .slice(0, DELETES),
  )
  const deletes = { direct: [], ...Object.fromEntries(gateways.map((gw) => [gw.label, []])) }
  for (let i = 0; i < DELETES; i++) {
    for (const [g, gw] of gateways.entries())
      if (toDelete[g][i])
        deletes[gw.label].push(
          (await timed(() => gw.call('gateway.session.delete', { session: toDelete[g][i] }))).ms,
        )
    deletes.direct.push((await timed(() => direct('DELETE', `/session/${foreignIds[i]}`))).ms)
  }
  const directDelete = round(p50(deletes.direct))
  for (const gw of gateways) {
    const ms = round(p50(deletes[gw.label]))
    results[gw.label].deleteMsP50 = { gateway: ms, direct: directDelete, ratio: ratio(ms, directDelete) }
    results[gw.label].gatewayRssMiB.end = await rssMiB(gw.child.pid)
    await gw.client.close()
  }
} finally {
  for (const child of children)
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
  await stack.stop()
  await rm(stateDir, { recursive: true, force: true })
}

console.log(JSON.stringify(results, null, 1))
const d = results.directMsP50
for (const label of ['this', 'compare']) {
  const g = results[label]
  if (!g) continue
  const l = g.listMsP50
  const r = g.listRatios
  console.log(
    `sessions [${label}]: ${results.upstreamSessions} upstream sessions; session.list limit 20 p50 ${l.firstPage} ms (cursor page ${l.cursorPage} ms) = ${r.firstPageVsDirectFull}x (${r.cursorPageVsDirectFull}x) one direct full listing (${d.directFull} ms), ${r.firstPageVsDirectPage20}x (${r.cursorPageVsDirectPage20}x) a direct 20-session page (${d.directPage20} ms)`,
  )
  console.log(
    `sessions [${label}]: session.delete p50 ${g.deleteMsP50.gateway} ms = ${g.deleteMsP50.ratio}x a direct DELETE (${g.deleteMsP50.direct} ms); gateway RSS ${g.gatewayRssMiB.beforeListings.rss} → ${g.gatewayRssMiB.afterListings.rss} MiB over the listings (peak ${g.gatewayRssMiB.afterListings.peak} MiB)`,
  )
}
