// The gateway alone in a process of its own, for the load harness (load.mjs): its RSS, file
// descriptors and upstream connections are then the gateway's and nobody else's. Configured by
// one JSON argument; prints `{"port":N}` once it listens; stops on SIGTERM.
import { createKeyResolver } from '@sallyport/credentials'
import { createUpstreamClient } from '@sallyport/upstream-client'
import { createGateway, createLogger, runtimeFromUpstream } from '../dist/index.js'

const config = JSON.parse(process.argv[2] ?? '{}')
const resolver = createKeyResolver({ stateDir: config.stateDir })
const upstream = createUpstreamClient(config.runtime)
const gateway = createGateway({
  keys: resolver,
  handleSecret: new Uint8Array(Buffer.from(config.secretHex, 'hex')),
  runtime: runtimeFromUpstream(upstream),
  workspaceRoot: config.runtime.directory,
  logger: createLogger({ level: config.logLevel ?? 'silent' }),
  screening: { screen: async () => ({ allowed: true }) },
  // The harness measures resources under load, not the per-credential limits.
  limits: { ratePerSecond: 1e5, rateBurst: 1e6, concurrentRuns: 10_000, concurrentWaits: 10_000 },
})
const server = await gateway.listen({ port: 0 })
process.stdout.write(`${JSON.stringify({ port: Number(new URL(server.url).port) })}\n`)
process.once('SIGTERM', async () => {
  await gateway.close()
  upstream.close()
  resolver.close()
  process.exit(0)
})
