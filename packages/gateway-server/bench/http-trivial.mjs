// A trivial tool over real HTTP (`pnpm bench:http`): the gateway in a process of its own
// (bench/gateway-process.mjs, audit lines on, written to a pipe this process drains) against a bare
// MCP SDK v2 server in a process of its own (same SDK, stateless streamable HTTP like the gateway,
// one tool with a zod input and output schema answering the same JSON as gateway.catalog.get).
// Both are driven the same way: `--connections` SDK clients (`Client` + streamable HTTP transport,
// version negotiation `auto`, one call at a time each; `--client fetch`: the same POSTs sent with
// bare `fetch`, a lighter client) over loopback, for `--seconds`, in
// `--reps` alternating repetitions. Printed: calls/s of each, the ratio gateway/bare (mean and
// min–max over the repetitions), CPU ms per call of each server process (utime+stime from
// /proc/<pid>/stat), RSS idle and after `--calls` calls of each.
//
//   node bench/http-trivial.mjs                        # 10 connections, 5 s x 3 reps, 3 000 calls
//   node bench/http-trivial.mjs --seconds 10 --reps 5
//   node bench/http-trivial.mjs --client fetch         # raw JSON-RPC POSTs instead of SDK clients
//   node bench/http-trivial.mjs --cpu-prof /tmp/prof   # both server processes write a .cpuprofile
//   node bench/http-trivial.mjs --no-heap-tuning       # the gateway with V8's default heap growth
//   node bench/http-trivial.mjs --heap-growing-percent 30   # another growth than the CLI's (60)
//   node bench/http-trivial.mjs --serve-bare           # (internal) the bare server process
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const argv = process.argv.slice(2)
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 ? argv[i + 1] : fallback
}

// The answer both tools give (what gateway.catalog.get answers a `full` credential), so both sides
// serialise and validate the same bytes.
const CATALOG_SHAPE = async () => {
  const { z } = await import('zod')
  return z.object({
    service: z.string(),
    policy: z.enum(['chat', 'read', 'full']),
    principal: z.string(),
    tools: z.array(z.string()),
    resources: z.array(z.string()),
    prompts: z.array(z.string()),
  })
}

if (argv.includes('--serve-bare')) {
  // ---- the bare SDK v2 server: what the SDK alone costs per call ----
  const { toNodeHandler } = await import('@modelcontextprotocol/node')
  const { createMcpHandler, McpServer } = await import('@modelcontextprotocol/server')
  const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/server/validators/ajv')
  const { z } = await import('zod')
  const { catalogFor } = await import('@sallyport/policy')
  const output = await CATALOG_SHAPE()
  const catalog = catalogFor('full')
  const answer = () => ({
    service: 'sallyport',
    policy: 'full',
    principal: 'bench',
    tools: [...catalog.tools],
    resources: [...catalog.resources],
    prompts: [...catalog.prompts],
  })
  const validator = new AjvJsonSchemaValidator()
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'bare', version: '1' }, { jsonSchemaValidator: validator })
      server.registerTool(
        'gateway.catalog.get',
        { inputSchema: z.object({}).strict(), outputSchema: output },
        async () => {
          const value = answer()
          return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value }
        },
      )
      return server
    },
    { legacy: 'stateless' },
  )
  const server = createServer(toNodeHandler(handler))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
  process.once('SIGTERM', async () => {
    server.close()
    server.closeAllConnections()
    await handler.close()
    process.exit(0)
  })
} else {
  await main()
}

async function main() {
  const { createCredentialStore } = await import('@sallyport/credentials')
  const { randomBytes } = await import('node:crypto')
  const { connect, cpuMs, rssMiB, spawnWithPort } = await import('./support.mjs')

  const SECONDS = Number(option('seconds', 5))
  const CONNECTIONS = Number(option('connections', 10))
  const REPS = Number(option('reps', 3))
  const CALLS = Number(option('calls', 3000))
  const profileDir = option('cpu-prof', undefined)
  const CLIENT = option('client', 'sdk')
  if (CLIENT !== 'sdk' && CLIENT !== 'fetch') throw new RangeError('--client is sdk or fetch')
  const TOOL = 'gateway.catalog.get'
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

  const start = (args, nodeArgs = []) => spawnWithPort(args, { nodeArgs })
  const stop = (child) =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', resolve)
      child.kill('SIGTERM')
    })

  const stateDir = await mkdtemp(join(tmpdir(), 'sallyport-http-bench-'))
  const workspace = join(stateDir, 'workspace')
  await mkdir(workspace)
  const { key } = await createCredentialStore({ stateDir }).add('bench', 'full')
  if (profileDir) await mkdir(profileDir, { recursive: true })
  // No runtime is needed for catalog.get. The stub holds the event stream the gateway opens at
  // start (so it does not retry) and counts every other request (none is expected).
  let runtimeCalls = 0
  const runtimeStub = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/event')) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.flushHeaders()
      return
    }
    runtimeCalls++
    res.writeHead(503).end()
  })
  await new Promise((r) => runtimeStub.listen(0, '127.0.0.1', r))
  const gatewayConfig = {
    stateDir,
    secretHex: randomBytes(32).toString('hex'),
    logLevel: option('log-level', 'info'),
    // The heap tuning `up` and `serve` apply (tuneHeapForServer); `--no-heap-tuning`: V8's default.
    heapTuning: process.argv.includes('--no-heap-tuning')
      ? false
      : process.argv.includes('--heap-growing-percent')
        ? Number(option('heap-growing-percent', '60'))
        : true,
    runtime: {
      baseUrl: `http://127.0.0.1:${runtimeStub.address().port}`,
      username: 'opencode',
      password: 'unused',
      directory: workspace,
    },
  }
  const gateway = await start(
    [join(import.meta.dirname, 'gateway-process.mjs'), JSON.stringify(gatewayConfig)],
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  )
  const bare = await start(
    [import.meta.filename, '--serve-bare'],
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  )
  if (profileDir)
    console.log(`CPU profiles in ${profileDir}: gateway pid ${gateway.child.pid}, bare pid ${bare.child.pid}`)
  const sides = {
    gateway: { pid: gateway.child.pid, url: `http://127.0.0.1:${gateway.port}`, runs: [] },
    bare: { pid: bare.child.pid, url: `http://127.0.0.1:${bare.port}`, runs: [] },
  }

  const check = (result) => {
    if (result?.isError || result?.structuredContent?.service !== 'sallyport')
      throw new Error(`unexpected answer: ${JSON.stringify(result).slice(0, 200)}`)
  }
  /**
   * A raw client: the very POST the SDK client sends for this call (2026-07-28 envelope, the same
   * headers), over the same global `fetch`; the answer is parsed and checked, not validated.
   */
  const rawClient = (side, i) => {
    let id = 0
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: `http-${i}`, version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    const headers = {
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'mcp-method': 'tools/call',
      'mcp-name': TOOL,
      'mcp-protocol-version': '2026-07-28',
    }
    return {
      async callTool() {
        const body = JSON.stringify({
          method: 'tools/call',
          params: { name: TOOL, arguments: {}, _meta: meta },
          jsonrpc: '2.0',
          id: id++,
        })
        const response = await fetch(`${side.url}/mcp`, { method: 'POST', headers, body })
        const answer = await response.json()
        if (response.status !== 200) throw new Error(`HTTP ${response.status}`)
        return answer.result
      },
      close: async () => {},
    }
  }
  const call = async (client) => check(await client.callTool({ name: TOOL, arguments: {} }))
  const clientsOf = (side) =>
    Promise.all(
      Array.from({ length: CONNECTIONS }, (_, i) =>
        CLIENT === 'fetch' ? rawClient(side, i) : connect(side.url, key, { name: `http-${i}` }),
      ),
    )

  /** `count` calls spread over the connections. */
  async function calls(side, count) {
    const clients = await clientsOf(side)
    let left = count
    await Promise.all(
      clients.map(async (c) => {
        while (left-- > 0) await call(c)
      }),
    )
    await Promise.all(clients.map((c) => c.close()))
  }

  /** Calls for SECONDS on every connection; calls/s and the server process's CPU per call. */
  async function timed(side) {
    const clients = await clientsOf(side)
    for (const c of clients) for (let i = 0; i < 5; i++) await call(c)
    let done = 0
    const cpu0 = await cpuMs(side.pid)
    const own0 = process.cpuUsage()
    const t0 = performance.now()
    const deadline = t0 + SECONDS * 1000
    await Promise.all(
      clients.map(async (c) => {
        while (performance.now() < deadline) {
          await call(c)
          done++
        }
      }),
    )
    const elapsed = (performance.now() - t0) / 1000
    const cpu = (await cpuMs(side.pid)) - cpu0
    const own = process.cpuUsage(own0)
    await Promise.all(clients.map((c) => c.close()))
    const run = {
      callsPerSecond: done / elapsed,
      cpuMsPerCall: cpu / done,
      clientCpuMsPerCall: (own.user + own.system) / 1000 / done,
    }
    side.runs.push(run)
    return run
  }

  const results = {
    config: { connections: CONNECTIONS, seconds: SECONDS, reps: REPS, calls: CALLS, client: CLIENT },
  }
  try {
    await sleep(2_000)
    results.rssIdleMiB = {
      gateway: Math.round(await rssMiB(sides.gateway.pid)),
      bare: Math.round(await rssMiB(sides.bare.pid)),
    }
    await calls(sides.gateway, CALLS)
    const gatewayAfter = Math.round(await rssMiB(sides.gateway.pid))
    await calls(sides.bare, CALLS)
    results.rssAfterCallsMiB = { gateway: gatewayAfter, bare: Math.round(await rssMiB(sides.bare.pid)) }

    const ratios = []
    // CPU per call, gateway/bare: steadier than calls/s on a machine that other work shares.
    const cpuRatios = []
    for (let rep = 0; rep < REPS; rep++) {
      // Alternating order, so neither side always runs on a warmer (or more tired) machine.
      const order = rep % 2 === 0 ? ['bare', 'gateway'] : ['gateway', 'bare']
      const runs = {}
      for (const name of order) runs[name] = await timed(sides[name])
      ratios.push(runs.gateway.callsPerSecond / runs.bare.callsPerSecond)
      cpuRatios.push(runs.gateway.cpuMsPerCall / runs.bare.cpuMsPerCall)
      console.log(
        `rep ${rep + 1}: gateway ${runs.gateway.callsPerSecond.toFixed(0)} calls/s (${runs.gateway.cpuMsPerCall.toFixed(3)} CPU ms/call), bare ${runs.bare.callsPerSecond.toFixed(0)} calls/s (${runs.bare.cpuMsPerCall.toFixed(3)} CPU ms/call), ratio ${ratios.at(-1).toFixed(2)}`,
      )
    }
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length
    const summary = (side) => ({
      callsPerSecond: Math.round(mean(side.runs.map((r) => r.callsPerSecond))),
      cpuMsPerCall: Number(mean(side.runs.map((r) => r.cpuMsPerCall)).toFixed(3)),
      clientCpuMsPerCall: Number(mean(side.runs.map((r) => r.clientCpuMsPerCall)).toFixed(3)),
    })
    results.gateway = summary(sides.gateway)
    results.bare = summary(sides.bare)
    results.ratio = {
      mean: Number(mean(ratios).toFixed(2)),
      min: Number(Math.min(...ratios).toFixed(2)),
      max: Number(Math.max(...ratios).toFixed(2)),
    }
    results.cpuRatio = {
      mean: Number(mean(cpuRatios).toFixed(2)),
      min: Number(Math.min(...cpuRatios).toFixed(2)),
      max: Number(Math.max(...cpuRatios).toFixed(2)),
    }
    results.runtimeCalls = runtimeCalls
    console.log(
      `gateway: ${TOOL} over HTTP ${results.gateway.callsPerSecond} calls/s vs bare SDK v2 server ${results.bare.callsPerSecond} calls/s (${CONNECTIONS} ${CLIENT === 'sdk' ? 'SDK client' : 'raw fetch'} connections, ${SECONDS} s x ${REPS}): ratio ${results.ratio.mean}x (${results.ratio.min}–${results.ratio.max}); CPU per call ${results.gateway.cpuMsPerCall} ms vs ${results.bare.cpuMsPerCall} ms (${results.cpuRatio.mean}x, ${results.cpuRatio.min}–${results.cpuRatio.max}); RSS idle ${results.rssIdleMiB.gateway} / ${results.rssIdleMiB.bare} MiB, after ${CALLS} calls ${results.rssAfterCallsMiB.gateway} / ${results.rssAfterCallsMiB.bare} MiB (gateway / bare)`,
    )
    console.log(JSON.stringify(results))
  } finally {
    await Promise.all([stop(gateway.child), stop(bare.child)])
    runtimeStub.close()
    runtimeStub.closeAllConnections()
    await rm(stateDir, { recursive: true, force: true })
  }
}
