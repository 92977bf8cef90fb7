// The gateway alone in a process of its own, for the load harness (load.mjs): its RSS, file
// descriptors and upstream connections are then the gateway's and nobody else's. Configured by
// one JSON argument; prints `{"port":N}` once it listens; stops on SIGTERM.
import { getHeapSpaceStatistics } from 'node:v8'
import { createKeyResolver } from '@sallyport/credentials'
import { createUpstreamClient } from '@sallyport/upstream-client'
import {
  createGateway,
  createLogger,
  gatewayUpstreamOptions,
  runtimeFromUpstream,
  tuneHeapForServer,
} from '../dist/index.js'

const config = JSON.parse(process.argv[2] ?? '{}')
// As the CLI's `up` and `serve` do; `"heapTuning": false` measures V8's default growth instead,
// a number another growth percent.
if (config.heapTuning !== false)
  tuneHeapForServer(typeof config.heapTuning === 'number' ? config.heapTuning : undefined)
const resolver = createKeyResolver({ stateDir: config.stateDir })
// As the CLI configures it: turns by credential, few requests in flight.
const upstream = createUpstreamClient({ ...gatewayUpstreamOptions, ...config.runtime })
const gateway = createGateway({
  keys: resolver,
  handleSecret: new Uint8Array(Buffer.from(config.secretHex, 'hex')),
  runtime: runtimeFromUpstream(upstream),
  workspaceRoot: config.runtime.directory,
  logger: createLogger({ level: config.logLevel ?? 'silent' }),
  screening: { screen: async () => ({ allowed: true }) },
  // The load harness measures resources under load, not the per-credential limits; the fairness
  // harness (`"defaultLimits": true`) measures the defaults (or `"limits"` over them).
  limits:
    config.defaultLimits === true
      ? config.limits
      : {
          ratePerSecond: 1e5,
          rateBurst: 1e6,
          concurrentRuns: 10_000,
          concurrentWaits: 10_000,
          concurrentCalls: 10_000,
          runsPerMinute: 1_000_000,
          runBurst: 10_000,
          runEventsPerSecond: 10_000_000,
          runEventBurst: 1_000_000_000,
        },
})
const server = await gateway.listen({ port: 0 })
process.stdout.write(`${JSON.stringify({ port: Number(new URL(server.url).port) })}\n`)
// Where the memory is, when the harness asks over IPC (MiB): the V8 heap (committed and used, by
// space), external memory and array buffers; RSS beyond those is native (malloc, code, stacks).
process.on('message', (message) => {
  if (message?.type !== 'memory') return
  const mib = (n) => Math.round((n / 1048576) * 10) / 10
  const usage = process.memoryUsage()
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics()
      .filter((space) => space.space_size > 0)
      .map((space) => [space.space_name, [mib(space.space_size), mib(space.space_used_size)]]),
  )
  process.send?.({
    type: 'memory',
    rss: mib(usage.rss),
    heapTotal: mib(usage.heapTotal),
    heapUsed: mib(usage.heapUsed),
    external: mib(usage.external),
    arrayBuffers: mib(usage.arrayBuffers),
    spaces,
  })
})
process.once('SIGTERM', async () => {
  await gateway.close()
  upstream.close()
  resolver.close()
  process.exit(0)
})
