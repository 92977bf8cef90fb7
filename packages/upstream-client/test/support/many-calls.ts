// Child process of request-retention.test.ts, run with a capped heap: N `getSession` calls
// through a real client against a tiny local HTTP server, all sharing one long-lived caller
// signal. Prints one JSON line with the heap after a warm-up and at the end (both after a GC);
// stops early once the heap has grown by 8 MiB.
import { getEventListeners } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createUpstreamClient } from '../../src/index.ts'

const calls = Number(process.argv[2] ?? 3_000)
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined)
const session = JSON.stringify({
  id: 'ses_1',
  slug: 'slug',
  projectID: 'prj_1',
  directory: '/work',
  title: 'job',
  version: '1.18.33',
  time: { created: 1, updated: 1 },
})
const server = createServer((_request, response) => {
  response.setHeader('content-type', 'application/json')
  response.end(session)
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const { port } = server.address() as AddressInfo
const client = createUpstreamClient({
  baseUrl: `http://127.0.0.1:${port}`,
  password: 'pw',
  directory: '/work',
})
const caller = new AbortController()

const heapMiB = async (): Promise<number> => {
  for (let round = 0; round < 4; round++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  return Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10
}

let done = 0
let failures = 0
let heapAfterWarmupMiB = 0
for (let i = 0; i < calls; i++) {
  if (i === 200) heapAfterWarmupMiB = await heapMiB()
  // A leak is clear long before the end; stopping then keeps a failing run short (a heap near
  // its cap spends most of its time in GC).
  if (i > 200 && i % 500 === 0 && (await heapMiB()) - heapAfterWarmupMiB > 8) break
  try {
    await client.getSession('ses_1', { signal: caller.signal })
    done++
  } catch {
    failures++
  }
}
const heapAtEndMiB = await heapMiB()
client.close()
server.close()
const result = {
  calls: done,
  failures,
  callerListeners: getEventListeners(caller.signal, 'abort').length,
  heapAfterWarmupMiB,
  heapAtEndMiB,
}
process.stdout.write(`${JSON.stringify(result)}\n`)
