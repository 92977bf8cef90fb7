// The client's default fetch (`createNodeFetch`, over node:http) against Node's global fetch
// (undici), in one process: the same GET of a 10 KB JSON answer from a loopback server, read
// whole, one at a time and 8 at once, alternating 5 rounds. Prints ms per request and the ratio
// (below 1: the default is faster). `pnpm --filter @sallyport/upstream-client bench` (build first).
import http from 'node:http'
import { createNodeFetch } from '../dist/index.js'

const body = JSON.stringify({
  items: Array.from({ length: 100 }, (_, i) => ({ id: `msg_${i}`, text: 'x'.repeat(80) })),
})
const server = http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(body)
  })
  .listen(0, '127.0.0.1')
await new Promise((resolve) => server.once('listening', resolve))
const url = `http://127.0.0.1:${server.address().port}/session`
const nodeFetch = createNodeFetch()
const undici = (input) => globalThis.fetch(input)

async function perRequest(fetch, n, parallel) {
  const start = performance.now()
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let i = 0; i < n / parallel; i++) await (await fetch(new Request(url))).json()
    }),
  )
  return (performance.now() - start) / n
}

await perRequest(nodeFetch, 300, 1)
await perRequest(undici, 300, 1)
const rounds = { node1: [], undici1: [], node8: [], undici8: [] }
for (let round = 0; round < 5; round++) {
  rounds.node1.push(await perRequest(nodeFetch, 1000, 1))
  rounds.undici1.push(await perRequest(undici, 1000, 1))
  rounds.node8.push(await perRequest(nodeFetch, 2000, 8))
  rounds.undici8.push(await perRequest(undici, 2000, 8))
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const line = (label, mine, theirs) =>
  `${label}: node:http ${median(mine).toFixed(3)} ms vs global fetch ${median(theirs).toFixed(3)} ms per request: ${(median(mine) / median(theirs)).toFixed(2)}x`
console.log(line('one at a time', rounds.node1, rounds.undici1))
console.log(line('8 at once', rounds.node8, rounds.undici8))
nodeFetch.close()
server.close()
