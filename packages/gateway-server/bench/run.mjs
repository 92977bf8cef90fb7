// Gateway benchmarks, as ratios measured side by side:
//  1. gateway.session.get over MCP vs the same upstream reads done directly (latency, p50/p99),
//     with the gateway in this process (its client's work shares the thread), then with the
//     gateway in a process of its own (bench/gateway-process.mjs, as `sallyport serve` runs it);
//     beside it the MCP floor: a bare SDK v2 server returning the same answer without reading
//     anything, against the same direct reads (what the protocol alone costs);
//  2. a trivial gateway tool call vs a bare MCP SDK v2 server with one trivial tool (throughput).
// Run after a build (root `pnpm bench` builds first). Uses the real runtime and scripted model.
import { randomBytes } from 'node:crypto'
import dc from 'node:diagnostics_channel'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv'
import { createCredentialStore, createKeyResolver } from '@sallyport/credentials'
import { startStack } from '@sallyport/testkit'
import { createUpstreamClient } from '@sallyport/upstream-client'
import { z } from 'zod'
import { createGateway, createLogger, runtimeFromUpstream } from '../dist/index.js'
import { connect, ms, quantile, spawnWithPort } from './support.mjs'

/** Latency of operations measured interleaved (a, b, …, a, b, …), so all see the same runtime load. */
async function latencies(ops, { warmup = 20, runs = 300 } = {}) {
  for (let i = 0; i < warmup; i++) for (const op of ops) await op()
  const samples = ops.map(() => [])
  for (let i = 0; i < runs; i++)
    for (const [k, op] of ops.entries()) {
      const t = performance.now()
      await op()
      samples[k].push(performance.now() - t)
    }
  return samples.map((xs) => {
    xs.sort((x, y) => x - y)
    return { p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) }
  })
}
const latencyPair = (a, b, options) => latencies([a, b], options)

/**
 * Where one call's time goes, traced with Node's diagnostics channels (client and gateway in this
 * process): the client's fetch created, the gateway's server got the request head, the first
 * runtime read sent, the last runtime read's answer head, the gateway's response finished, the
 * client's response head and body. Returns the p50 of each phase in ms (phases of one call add
 * up to its total; the p50s nearly do).
 */
async function phases(op, runs = 200) {
  let marks
  const first = (name) => () => {
    if (marks && marks[name] === undefined) marks[name] = performance.now()
  }
  const last = (name) => () => {
    if (marks) marks[name] = performance.now()
  }
  const subscriptions = [
    ['undici:request:create', first('clientSend')],
    ['http.server.request.start', first('serverStart')],
    ['http.client.request.start', first('readSent')],
    ['http.client.response.finish', last('readAnswered')],
    ['http.server.response.finish', first('serverFinish')],
    ['undici:request:headers', first('clientHead')],
    ['undici:request:trailers', first('clientBody')],
  ]
  for (const [channel, fn] of subscriptions) dc.subscribe(channel, fn)
  const spans = {
    'client, until its request is sent': (m) => m.clientSend - m.start,
    'loopback to the gateway': (m) => m.serverStart - m.clientSend,
    'gateway, until its first runtime read is sent': (m) => m.readSent - m.serverStart,
    'runtime reads (first sent → last answer head)': (m) => m.readAnswered - m.readSent,
    'gateway, after the reads until its answer is written': (m) => m.serverFinish - m.readAnswered,
    'client, from the answer written to its result': (m) => m.end - m.serverFinish,
    'the whole call': (m) => m.end - m.start,
  }
  const samples = Object.fromEntries(Object.keys(spans).map((k) => [k, []]))
  try {
    for (let i = 0; i < runs; i++) {
      marks = { start: performance.now() }
      await op()
      const m = { ...marks, end: performance.now() }
      marks = undefined
      if (Object.keys(m).length < 9) continue
      for (const [k, span] of Object.entries(spans)) samples[k].push(span(m))
    }
  } finally {
    for (const [channel, fn] of subscriptions) dc.unsubscribe(channel, fn)
  }
  return Object.fromEntries(
    Object.entries(samples).map(([k, xs]) => [
      k,
      quantile(
        xs.sort((a, b) => a - b),
        0.5,
      ),
    ]),
  )
}

async function throughput(makeClient, call, { connections = 10, seconds = 3 } = {}) {
  const clients = await Promise.all(Array.from({ length: connections }, makeClient))
  for (const c of clients) for (let i = 0; i < 5; i++) await call(c)
  let done = 0
  const deadline = performance.now() + seconds * 1000
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < deadline) {
        await call(c)
        done++
      }
    }),
  )
  await Promise.all(clients.map((c) => c.close()))
  return done / seconds
}

const stateDir = await mkdtemp(join(tmpdir(), 'sallyport-bench-'))
const stack = await startStack()
const resolver = createKeyResolver({ stateDir })
try {
  const { key } = await createCredentialStore({ stateDir }).add('bench', 'full')
  const runtime = {
    baseUrl: stack.runtime.url,
    username: stack.runtime.username,
    password: stack.runtime.password,
    directory: stack.runtime.directory,
  }
  const upstream = createUpstreamClient(runtime)
  // One secret for both gateways (this process's and the child's): the same handles open in both.
  const secretHex = randomBytes(32).toString('hex')
  const gateway = createGateway({
    keys: resolver,
    handleSecret: new Uint8Array(Buffer.from(secretHex, 'hex')),
    runtime: runtimeFromUpstream(upstream),
    workspaceRoot: stack.runtime.directory,
    logger: createLogger({ level: 'silent' }),
    // Throughput is measured here, not the per-credential rate limit (one credential drives it).
    limits: { ratePerSecond: 1e5, rateBurst: 1e6 },
  })
  const server = await gateway.listen({ port: 0 })
  const client = await connect(server.url, key)

  // A session with a few turns, created through the gateway.
  let sessionHandle
  for (let i = 0; i < 3; i++) {
    const marker = stack.model.script([{ text: `answer ${i} `.repeat(20) }])
    const run = await client.callTool({
      name: 'gateway.agent.run',
      arguments: {
        message: `turn ${i} ${marker}`,
        waitMs: 15000,
        ...(sessionHandle && { session: sessionHandle }),
      },
    })
    sessionHandle = run.structuredContent.session
    if (run.structuredContent.status !== 'completed')
      throw new Error(`setup turn ended ${run.structuredContent.status}`)
  }
  const upstreamId = (await upstream.listSessions()).find((s) => s.metadata?.sallyport)?.id

  // What a client reading the runtime directly needs for the same view: the session, its status
  // and its messages (the gateway reads the session and the messages; the status comes from the
  // event stream: `runtime/status-view.ts`).
  const directReads = () =>
    Promise.all([
      upstream.getSession(upstreamId),
      upstream.sessionStatus(),
      upstream.listMessages(upstreamId),
    ])
  // The same three reads as any HTTP client would make them: Node's fetch, the body parsed, nothing
  // validated (for comparison only: the ratio above is against the gateway's own runtime client).
  const plainRead = async (path) => {
    const url = new URL(`${runtime.baseUrl}${path}`)
    url.searchParams.set('directory', runtime.directory)
    const response = await fetch(url, { headers: { authorization: basic } })
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`)
    return response.json()
  }
  const basic = `Basic ${Buffer.from(`${runtime.username}:${runtime.password}`).toString('base64')}`
  const plainReads = () =>
    Promise.all([
      plainRead(`/session/${upstreamId}`),
      plainRead('/session/status'),
      plainRead(`/session/${upstreamId}/message`),
    ])
  const sessionGet = (c) => () =>
    c.callTool({ name: 'gateway.session.get', arguments: { session: sessionHandle, include: ['messages'] } })
  const printSessionGet = (where, [viaGateway, direct]) =>
    console.log(
      `gateway: session.get(messages) over MCP, gateway ${where}, p50 ${ms(viaGateway.p50)} p99 ${ms(viaGateway.p99)}; direct upstream reads p50 ${ms(direct.p50)} p99 ${ms(direct.p99)}; ratio p50 ${(viaGateway.p50 / direct.p50).toFixed(2)}x, p99 ${(viaGateway.p99 / direct.p99).toFixed(2)}x (goal ≤ 1.2x at p50)`,
    )
  {
    const [viaGateway, direct, plain] = await latencies([sessionGet(client), directReads, plainReads])
    printSessionGet('in this process', [viaGateway, direct])
    console.log(
      `gateway: the same reads with Node's fetch, unvalidated, p50 ${ms(plain.p50)} (gateway ${(viaGateway.p50 / plain.p50).toFixed(2)}x of them; the gateway's runtime client ${(direct.p50 / plain.p50).toFixed(2)}x)`,
    )
    const spent = await phases(sessionGet(client))
    console.log(
      `gateway: session.get in this process, p50 of each phase: ${Object.entries(spent)
        .map(([phase, t]) => `${phase} ${ms(t)}`)
        .join('; ')}`,
    )
  }
  {
    // What any MCP server pays for the same answer: a bare SDK v2 server in this process whose one
    // tool returns the gateway's own session.get result (same size), against the direct reads.
    const answer = await sessionGet(client)()
    const floorHandler = createMcpHandler(() => {
      const s = new McpServer(
        { name: 'floor', version: '1' },
        { jsonSchemaValidator: new AjvJsonSchemaValidator() },
      )
      s.registerTool(
        'get',
        { inputSchema: z.object({ session: z.string() }), outputSchema: z.looseObject({}) },
        async () => ({ content: answer.content, structuredContent: answer.structuredContent }),
      )
      return s
    })
    const floorServer = createServer(toNodeHandler(floorHandler))
    await new Promise((r) => floorServer.listen(0, '127.0.0.1', r))
    const floorClient = await connect(`http://127.0.0.1:${floorServer.address().port}`, 'unused')
    const [floor, direct] = await latencyPair(
      () => floorClient.callTool({ name: 'get', arguments: { session: sessionHandle } }),
      directReads,
    )
    console.log(
      `gateway: MCP floor: a bare SDK v2 server returning the same session.get answer (${(JSON.stringify(answer).length / 1024).toFixed(1)} KB), no runtime reads, p50 ${ms(floor.p50)} (direct upstream reads p50 ${ms(direct.p50)}: the floor alone is ${(floor.p50 / direct.p50).toFixed(2)}x of them)`,
    )
    await floorClient.close()
    floorServer.close()
    await floorHandler.close()
  }
  {
    const { child, port } = await spawnWithPort([
      join(import.meta.dirname, 'gateway-process.mjs'),
      JSON.stringify({ stateDir, secretHex, runtime }),
    ])
    try {
      const remote = await connect(`http://127.0.0.1:${port}`, key)
      printSessionGet('in its own process', await latencyPair(sessionGet(remote), directReads))
      await remote.close()
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await once(child, 'exit')
      }
    }
  }
  // Session list cost vs the number of upstream sessions (the gateway verifies every record).
  const listCost = async () =>
    latencyPair(
      () => client.callTool({ name: 'gateway.session.list', arguments: { limit: 20 } }),
      () => upstream.listSessions({ roots: true }),
      { warmup: 5, runs: 60 },
    )
  const [smallGateway, smallDirect] = await listCost()
  for (let i = 0; i < 300; i++) await upstream.createSession({ title: `foreign ${i}` })
  const [bigGateway, bigDirect] = await listCost()
  console.log(
    `gateway: session.list(limit 20) with 3 upstream sessions p50 ${ms(smallGateway.p50)} (direct list ${ms(smallDirect.p50)}); with 303 p50 ${ms(bigGateway.p50)} (direct ${ms(bigDirect.p50)}); ratio to direct ${(smallGateway.p50 / smallDirect.p50).toFixed(2)}x → ${(bigGateway.p50 / bigDirect.p50).toFixed(2)}x`,
  )
  await client.close()

  // Trivial tool: gateway.catalog.get vs a bare SDK v2 server with one trivial tool.
  const validator = new AjvJsonSchemaValidator()
  const bare = createMcpHandler(() => {
    const s = new McpServer({ name: 'bare', version: '1' }, { jsonSchemaValidator: validator })
    s.registerTool(
      'noop',
      { inputSchema: z.object({}), outputSchema: z.object({ ok: z.boolean() }) },
      async () => ({
        content: [{ type: 'text', text: 'ok' }],
        structuredContent: { ok: true },
      }),
    )
    return s
  })
  const bareServer = createServer(toNodeHandler(bare))
  await new Promise((r) => bareServer.listen(0, '127.0.0.1', r))
  const bareUrl = `http://127.0.0.1:${bareServer.address().port}`
  const bareRps = await throughput(
    () => connect(bareUrl, 'unused'),
    (c) => c.callTool({ name: 'noop', arguments: {} }),
  )
  const gatewayRps = await throughput(
    () => connect(server.url, key),
    (c) => c.callTool({ name: 'gateway.catalog.get', arguments: {} }),
  )
  console.log(
    `gateway: trivial tool ${gatewayRps.toFixed(0)} calls/s vs bare SDK v2 server ${bareRps.toFixed(0)} calls/s (10 connections, 3 s each): ratio ${(gatewayRps / bareRps).toFixed(2)}`,
  )
  bareServer.close()
  await bare.close()
  await gateway.close()
  upstream.close()

  const rss = process.memoryUsage().rss / 1024 / 1024
  console.log(
    `gateway: bench process RSS ${rss.toFixed(0)} MiB (gateway, clients and bare server in one process)`,
  )
} finally {
  resolver.close()
  await stack.stop()
  await rm(stateDir, { recursive: true, force: true })
}
