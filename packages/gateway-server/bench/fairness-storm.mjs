// The storm of the fairness harness (fairness.mjs), in a process of its own: one credential using
// all of its allowance over many keep-alive connections, as an attacker with a valid chat key
// would. Two patterns (`pattern`):
//   runs  — `waiters` connections wait on the slow jobs it was given (as many as its waits
//           allowance, so none is refused); every other connection calls agent.run with a wait,
//           again and again (a refused call is sent again after 300 ms). The harshest: it keeps
//           as many runs going as the limits let it start.
//   bursts — `runners` connections start a run each, all at once, whenever the run allowance has
//           refilled; `waiters` wait on the slow jobs; every other connection loops over cheap
//           calls.
//   heavy — `runners` connections run with the longest message allowed, each resuming its own
//           session (its history grows with every run); every other connection reads those
//           sessions with every view (a refused call again after 300 ms): the most runtime work
//           per operation.
//   mixed — `runners` connections run back to back (each run followed with waiting job.get),
//           `waiters` wait on the slow jobs, every other connection loops over cheap calls (no
//           back-off: a refused call is simply sent again).
// Prints one JSON object of counts when `seconds` are over.
//
//   node fairness-storm.mjs <mcp url> <key> <seconds> <connections> <pattern> <runners> <waiters> <jobs json> [marker]
import http from 'node:http'

const [url, key, secondsArg, connectionsArg, pattern, runnersArg, waitersArg, jobsJson, marker = ''] =
  process.argv.slice(2)
const seconds = Number(secondsArg)
const connections = Number(connectionsArg)
const runners = Number(runnersArg)
const waiters = Number(waitersArg)
const slowJobs = JSON.parse(jobsJson)
const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  authorization: `Bearer ${key}`,
}
const counts = {}
const count = (what) => {
  counts[what] = (counts[what] ?? 0) + 1
}
const until = Date.now() + seconds * 1000

/** POSTs one tools/call; resolves with its structured result, or undefined when refused. */
function call(name, args) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args },
  })
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', headers, agent }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => {
        text += d
      })
      res.on('end', () => {
        if (res.statusCode !== 200) {
          count(`http_${res.statusCode}`)
          resolve(undefined)
          return
        }
        // An SSE answer carries the JSON-RPC message on its data line.
        const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}')
        let message
        try {
          message = JSON.parse(data)
        } catch {
          count('unparsable')
          resolve(undefined)
          return
        }
        const result = message.result
        const code = result?.isError
          ? (result.structuredContent?.error?.code ?? 'tool_error')
          : message.error
            ? 'rpc_error'
            : 'ok'
        count(code)
        resolve(code === 'ok' ? result.structuredContent : undefined)
      })
      res.on('error', () => {
        count('network')
        resolve(undefined)
      })
    })
    req.on('error', () => {
      count('network')
      resolve(undefined)
    })
    req.end(body)
  })
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled'])
const runner = async (k) => {
  for (let i = 0; Date.now() < until; i++) {
    const run = await call('gateway.agent.run', { message: `storm ${k}.${i} ${marker}`, waitMs: 0 })
    if (!run) continue
    count('runs')
    let status = run.status
    while (!TERMINAL.has(status) && Date.now() < until) {
      const got = await call('gateway.job.get', { job: run.job, waitMs: 25_000 })
      status = got?.status ?? status
    }
  }
}
const waiter = async (k) => {
  while (Date.now() < until)
    await call('gateway.job.get', { job: slowJobs[k % slowJobs.length], waitMs: 25_000 })
}
const CHEAP = [
  ['gateway.catalog.get', () => ({})],
  ['gateway.session.list', () => ({})],
  ['gateway.job.get', (k) => ({ job: slowJobs[k % slowJobs.length] })],
]
const hammer = async (k) => {
  for (let i = k; Date.now() < until; i++) {
    const [name, args] = CHEAP[i % CHEAP.length]
    await call(name, args(i))
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
/** agent.run with a wait, again and again (a refused one again after 300 ms). */
const waitingRunner = async (k) => {
  for (let i = 0; Date.now() < until; i++) {
    const run = await call('gateway.agent.run', { message: `storm ${k}.${i} ${marker}`, waitMs: 20_000 })
    if (run) count('runs')
    else await sleep(300)
  }
}
/** job.get with a wait on a slow job (a refused one again after 300 ms). */
const waitingGetter = async (k) => {
  while (Date.now() < until)
    if (!(await call('gateway.job.get', { job: slowJobs[k % slowJobs.length], waitMs: 20_000 })))
      await sleep(300)
}
/** Sessions of the `heavy` pattern's runners, which its readers read. */
const heavySessions = []
const BIG = 'x'.repeat(31_000)
/** agent.run with the longest message, resuming its own session again and again (`heavy`). */
const heavyRunner = async (k) => {
  let session
  for (let i = 0; Date.now() < until; i++) {
    const run = await call('gateway.agent.run', {
      message: `storm ${k}.${i} ${marker} ${BIG}`,
      waitMs: 20_000,
      ...(session && { session }),
    })
    if (!run) {
      await sleep(300)
      continue
    }
    count('runs')
    if (!session) {
      session = run.session
      heavySessions.push(session)
    }
  }
}
/** session.get with every view of the runners' growing sessions (`heavy`). */
const heavyReader = async (k) => {
  for (let i = k; Date.now() < until; i++) {
    const got =
      heavySessions.length === 0
        ? await call('gateway.catalog.get', {})
        : await call('gateway.session.get', {
            session: heavySessions[i % heavySessions.length],
            include: ['messages', 'diff', 'todos'],
          })
    if (!got) await sleep(300)
  }
}
const started = Date.now()
/**
 * agent.run with a wait, all `runners` at once each time the run allowance has refilled (every
 * `runners` seconds at a run a second): the longest queues behind the run starts (`bursts`).
 */
const burstRunner = async (k) => {
  for (let i = 0; Date.now() < until; i++) {
    const period = runners * 1_000
    await sleep(period - ((Date.now() - started) % period))
    if (Date.now() >= until) break
    const run = await call('gateway.agent.run', { message: `storm ${k}.${i} ${marker}`, waitMs: 20_000 })
    if (run) count('runs')
  }
}
const loops = []
if (pattern === 'bursts') {
  for (let k = 0; k < connections; k++)
    loops.push(k < runners ? burstRunner(k) : k < runners + waiters ? waitingGetter(k) : hammer(k))
} else if (pattern === 'heavy') {
  for (let k = 0; k < connections; k++) loops.push(k < runners ? heavyRunner(k) : heavyReader(k))
} else if (pattern === 'runs') {
  for (let k = 0; k < connections; k++) loops.push(k < waiters ? waitingGetter(k) : waitingRunner(k))
} else if (pattern === 'mixed') {
  for (let k = 0; k < runners; k++) loops.push(runner(k))
  for (let k = 0; k < waiters; k++) loops.push(waiter(k))
  for (let k = runners + waiters; k < connections; k++) loops.push(hammer(k))
} else throw new Error(`unknown storm pattern ${pattern}`)
await Promise.all(loops)
agent.destroy()
process.stdout.write(`${JSON.stringify(counts)}\n`)
