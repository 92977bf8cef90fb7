// The scale-out harness (`pnpm bench:scale`, issue "Scale out without sticky sessions, survive
// faults, and show it"): one stack (`sallyport up` of the built CLI: the real runtime, the
// moderator runtime, the scripted model of testkit), several extra gateway processes
// (`sallyport serve`) on loopback ports, and Debian's nginx in front of them: round robin, no
// affinity of any kind. Real MCP SDK clients talk to nginx. Loopback only, bounded in time and
// count; every process it starts is stopped on exit, on failure and on SIGINT/SIGTERM.
//
// The replicas are `sallyport serve --dir <the stack> --workspace <its workspace> --port <own
// port>`: they share the stack directory, of which a gateway process reads only sallyport.json
// and state/stack.env (where the runtimes are), state/native-password and
// state/moderator-password (to reach them), state/handle-secret (the handle and ownership keys)
// and state/credentials/ (the keys, reloaded on change). Nothing else passes between them: no
// shared memory, no cache, no session store, no affinity.
//
// What it checks and measures:
//   - alternation: one client's consecutive calls through nginx go to different replicas;
//   - cross-replica workflows: a job started on one replica is polled, answered (question and
//     permission), cancelled on others; MCP 2026-07-28 input_required rounds are answered on
//     another replica than the one that asked; session list, fork and delete across replicas;
//   - throughput of a fixed mix of cheap calls (catalog.get, session.get, job.get) with K clients
//     through nginx for 1, 2 and 4 replicas (ratios against 1 in the same run), and the CPU of
//     the gateways, the runtime, nginx and this process (the clients) while it runs;
//   - credential rotation under traffic: `sallyport credential rotate` of one credential while
//     others keep calling; how long until its old key is refused, and its new key accepted, by
//     EVERY replica (each probed directly, not through nginx);
//   - a replica killed (SIGKILL) under traffic and restarted: what clients saw, and every handle
//     the killed process issued (job, session, pending question) still works on the restarted
//     replica (addressed directly) and through nginx;
//   - at the end, every job any phase started ended terminal and is visible (job.get through
//     nginx and on each replica directly; its session in session.list), and no call got a
//     not-found-class error (not_found, handle_invalid, handle_expired) it should not have.
//
//   node bench/scale-out.mjs            # 1, 2, 4 replicas; 15 s per throughput run, 16 clients
//   node bench/scale-out.mjs --smoke    # 2 replicas, short; exits 1 on any correctness failure
//   node bench/scale-out.mjs --seconds 30 --clients 32 --nginx /usr/sbin/nginx
//   node bench/scale-out.mjs --smoke --control sticky          # negative controls: each must FAIL,
//   node bench/scale-out.mjs --smoke --control foreign-secret  # showing the checks can fail
//     (sticky: nginx with ip_hash affinity; foreign-secret: every replica but the first serves a
//     copy of the stack with a handle secret of its own, and so its own credential store)
//
// It prints one JSON object, one `scale-out:` line per measure and `scale-out passed` (`scale-out
// smoke passed`) or `… FAILED: <what>` with exit 1: a run fails on correctness only, never on a
// timing (the rotation bound apart: 10 s in smoke, 5 s otherwise). No key, token, handle or
// upstream id is printed.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import {
  FAKE_MODERATION_MODEL_ID,
  FAKE_PROVIDER_ID,
  freePort,
  scriptedModelPreferences,
  startModelServer,
  step,
} from '@sallyport/testkit'

const argv = process.argv.slice(2)
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`)
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback
}
const smoke = argv.includes('--smoke')
const NGINX = option('nginx', '/usr/sbin/nginx')
/** A negative control (`sticky`, `foreign-secret`): a broken set-up the checks must catch. */
const CONTROL = option('control', undefined)
if (CONTROL !== undefined && !['sticky', 'foreign-secret'].includes(CONTROL)) {
  console.error(`--control must be sticky or foreign-secret (got ${CONTROL})`)
  process.exit(2)
}
/** Replica counts of the throughput runs; the largest is the set every other phase uses. */
const SCALE = smoke ? [1, 2] : [1, 2, 4]
const REPLICAS = Math.max(...SCALE)
/** Throughput: seconds per run and clients. Full mode runs the counts up, then down again. */
const SECONDS = Number(option('seconds', smoke ? 4 : 15))
const CLIENTS = Number(option('clients', smoke ? 8 : 16))
const ORDER = smoke ? SCALE : [...SCALE, ...[...SCALE].reverse()]
/**
 * The call mixes measured: `reads` (catalog.get, session.get, job.get: two of three reach the
 * runtime) and, in full mode, `catalog` (catalog.get alone: the gateway's own work, no runtime).
 */
const MIXES = option('mixes', smoke ? 'reads' : 'reads,catalog').split(',')
/** Cross-replica workflow sets (question, permission, round, cancel, sessions). */
const WORKFLOWS = smoke ? 1 : 3
/** The fault phase: seconds of traffic (the kill at a third, the restart at half) and clients. */
const FAULT_SECONDS = smoke ? 15 : 30
const TRAFFIC_CLIENTS = smoke ? 6 : 12
/** The whole run is bounded: past this, it stops everything and fails. */
const OVERALL_MS = (smoke ? 300 : 900) * 1000
/** How long a rotation may take to reach every replica before the harness calls it failed. */
const ROTATION_BOUND_MS = smoke ? 10_000 : 5_000
const ROTATION_DEADLINE_MS = 20_000

const BIN = join(import.meta.dirname, '..', 'dist', 'bin.js')
const CREDENTIALS = ['scale-a', 'scale-b', 'scale-c', 'scale-d']
const ROTATED = 'scale-rot'
const NOT_FOUND_CLASS = new Set(['not_found', 'handle_invalid', 'handle_expired'])
const TERMINAL = new Set(['completed', 'failed', 'cancelled'])

// ---- small helpers ----

/** What went wrong: the run fails when this is not empty. */
const failures = []

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
const round1 = (v) => Math.round(v * 10) / 10
const round2 = (v) => Math.round(v * 100) / 100
const now = () => performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` until it returns something other than undefined/false; fails at the deadline. */
async function until(check, { timeoutMs, what, intervalMs = 100 }) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(intervalMs)
  }
}

/** CPU time (user + system) of `pid` in ms, or undefined once it is gone. */
async function cpuMs(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/** CPU time every core of the machine spent busy since boot, in ms (/proc/stat, USER_HZ 100). */
async function machineBusyMs() {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0]
  const [user, nice, system, , , irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number)
  return (user + nice + system + irq + softirq + steal) * 10
}

/** Child pids of `pid` (from /proc: every process's parent). */
async function childrenOf(pid) {
  const out = []
  for (const name of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(name)) continue
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[1]) === pid) out.push(Number(name))
  }
  return out
}

const alive = (child) => child.exitCode === null && child.signalCode === null

// ---- processes: every one is registered and stopped at the end ----

const processes = new Set()
let work
let model

/** Stops a child: `signal`, then SIGKILL after `graceMs`; resolves once it exited. */
async function stopChild(child, signal = 'SIGTERM', graceMs = 5_000) {
  if (!alive(child)) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill(signal)
  const timer = setTimeout(() => {
    if (alive(child)) child.kill('SIGKILL')
  }, graceMs)
  await exited
  clearTimeout(timer)
}

let cleaning
const cleanup = () => {
  cleaning ??= stopEverything()
  return cleaning
}

async function stopEverything() {
  // nginx and the replicas first, the stack (which stops its runtimes itself) last.
  const all = [...processes]
  await Promise.all(all.filter((p) => p.kind !== 'up').map((p) => stopChild(p.child, p.stopSignal, 5_000)))
  for (const p of all.filter((p) => p.kind === 'up')) {
    const pids = p.runtimePids?.() ?? []
    await stopChild(p.child, 'SIGTERM', 12_000)
    // Should `up` have been killed before it could stop them, its runtimes are ours to stop: only
    // processes still running with this stack's directory in their environment.
    for (const pid of pids) {
      const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '')
      if (!stackDirPath || !environ.includes(stackDirPath)) continue
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
  }
  await model?.close().catch(() => undefined)
  if (work) await rm(work, { recursive: true, force: true }).catch(() => undefined)
}

process.on('exit', () => {
  for (const p of processes) if (alive(p.child)) p.child.kill('SIGKILL')
})
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    console.error(`scale-out: ${signal}, stopping everything`)
    failures.push(`interrupted by ${signal}`)
    cleanup().finally(() => {
      console.log(`scale-out${smoke ? ' smoke' : ''} FAILED: ${failures.join('; ')}`)
      process.exit(130)
    })
  })

/** The environment of a CLI process: this one's, minus anything that would redirect the stack. */
function cliEnv() {
  const env = { ...process.env }
  delete env.SALLYPORT_DIR
  return env
}

/**
 * Waits for the built CLI: a build in progress (tsup cleans dist/ first) would make a start fail
 * for nothing. Tests of the same working tree rebuild it when its sources change.
 */
const cliBuilt = () =>
  until(() => existsSync(BIN), { timeoutMs: 120_000, what: `${BIN} (a build in progress?)`, intervalMs: 200 })

/** Runs `sallyport <args>` to completion (the output is returned, never printed). */
async function runCli(args) {
  await cliBuilt()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** A long-running `sallyport` command whose output goes to a file of the work directory. */
async function startCli(name, kind, args) {
  await cliBuilt()
  const log = join(work, `${name}.log`)
  const fd = openSync(log, 'a')
  const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(), stdio: ['ignore', fd, fd] })
  closeSync(fd)
  const entry = { name, kind, child, log, stopSignal: 'SIGTERM' }
  processes.add(entry)
  child.once('exit', () => {
    if (kind !== 'up') processes.delete(entry)
  })
  return entry
}

const logLines = (text) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      try {
        return JSON.parse(line)
      } catch {
        return {}
      }
    })

/** Waits for the `ready` line of a CLI process (fails at once if it exits first). */
async function readyOf(entry, timeoutMs) {
  return until(
    async () => {
      if (!alive(entry.child)) {
        const tail = (await readFile(entry.log, 'utf8').catch(() => ''))
          .split('\n')
          .filter((l) => !l.includes('child_output'))
          .slice(-15)
          .join('\n')
        throw new Error(`${entry.name} exited before it was ready:\n${tail}`)
      }
      return logLines(await readFile(entry.log, 'utf8')).find((line) => line.event === 'ready')
    },
    { timeoutMs, what: `${entry.name} ready`, intervalMs: 100 },
  )
}

// ---- the stack ----

function useScriptedModel(dir, baseURL) {
  const file = join(dir, 'config/assistant/opencode.json')
  const prefs = JSON.parse(readFileSync(file, 'utf8'))
  Object.assign(prefs, scriptedModelPreferences(baseURL))
  writeFileSync(file, `${JSON.stringify(prefs, null, 2)}\n`)
}

function editConfig(dir, edit) {
  const file = join(dir, 'sallyport.json')
  const config = JSON.parse(readFileSync(file, 'utf8'))
  edit(config)
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`)
}

// ---- replicas ----

/** port → replica index (0-based), for every replica this run started. */
const replicaByPort = new Map()
const replicas = []

let replicaStarts = 0
/** The stack directory replica `index` serves (a copy with its own secret under --control foreign-secret). */
let foreignDir
const replicaDir = (index) => (foreignDir && index > 0 ? foreignDir : stackDir())

async function startReplica(index, port) {
  const entry = await startCli(`replica-${index}-${++replicaStarts}`, 'serve', [
    'serve',
    '--dir',
    replicaDir(index),
    '--workspace',
    join(stackDir(), 'workspace'),
    '--port',
    String(port),
  ])
  const ready = await readyOf(entry, 60_000)
  const replica = { index, port, entry, mcpUrl: String(ready.mcpUrl), pid: entry.child.pid }
  replicas[index] = replica
  replicaByPort.set(port, index)
  return replica
}

let stackDirPath
const stackDir = () => stackDirPath

// ---- nginx ----

/**
 * Calls that are safe to send twice (by Mcp-Method and Mcp-Name, which the gateway checks against
 * the body): the read-only tools and requests, and job.cancel (idempotent: a cancelled job is
 * answered `cancelled` again). nginx moves them to another replica even after a replica got
 * them. agent.run, interaction.respond, session.fork and session.delete are not: a second one
 * would start another run, or answer `not_pending`/`not_found` for something that was done.
 */
const RETRY_SAFE_MAP = [
  '"~^tools/call:gateway\\.(job\\.get|job\\.cancel|session\\.get|session\\.list|catalog\\.get|workspace\\.read|workspace\\.search)$" 1;',
  '"~^(tools/list|prompts/list|prompts/get|resources/list|resources/templates/list|resources/read|server/discover|ping):" 1;',
]

function nginxConfig({ dir, port, upstreamPorts }) {
  const user = process.getuid?.() === 0 ? 'user nobody nogroup;\n' : ''
  return `# Generated by packages/cli/bench/scale-out.mjs: loopback only, round robin, no affinity.
${user}daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 2048; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # Which replica answered (the last one tried), for the log and for the clients of this harness.
  log_format scale '$msec|$request_time|$http_x_bench_phase|$upstream_addr|$status|$upstream_status|$http_mcp_method|$http_mcp_name';
  map "$http_mcp_method:$http_mcp_name" $retry_safe {
    default 0;
    ${RETRY_SAFE_MAP.join('\n    ')}
  }
  upstream gateways {
    # Plain round robin: no ip_hash, no hash, no sticky cookie. A replica that refuses a
    # connection is left out for 2 s, then tried again.
${CONTROL === 'sticky' ? '    ip_hash; # the sticky negative control\n' : ''}${upstreamPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n')}
    keepalive 64;
    # Below the gateway's own keep-alive timeout (5 s), so nginx never reuses a connection the
    # gateway is closing.
    keepalive_timeout 4s;
  }
  server {
    listen 127.0.0.1:${port};
    access_log ${dir}/access.log scale;
    client_max_body_size 4m;
    client_body_buffer_size 4m;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $http_host;
    proxy_buffering off;
    proxy_connect_timeout 2s;
    proxy_send_timeout 30s;
    proxy_read_timeout 90s;
    add_header X-Upstream $upstream_addr always;
    location = /mcp {
      if ($retry_safe) { rewrite ^ /retry-safe last; }
      # Everything else (agent.run, interaction.respond, fork, delete, 2025-era requests, which
      # carry no Mcp-Name): moved to another replica only when no byte of it reached the first.
      # (A client that sends a false Mcp-Name on a 2025-era request only gets its own call
      # repeated; a 2026-07-28 request whose header and body disagree is refused by the gateway.)
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 2;
      proxy_pass http://gateways;
    }
    location = /retry-safe {
      internal;
      rewrite ^ /mcp break;
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_next_upstream_tries 3;
      proxy_next_upstream_timeout 60s;
      proxy_pass http://gateways;
    }
    location / {
      proxy_next_upstream error timeout;
      proxy_pass http://gateways;
    }
  }
}
`
}

let nginxCount = 0
async function startNginx(upstreamPorts) {
  const dir = join(work, `nginx-${nginxCount++}`)
  mkdirSync(dir)
  // Its workers run as nobody when this runs as root: they must be able to enter the directory.
  chmodSync(dir, 0o711)
  const port = await freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxConfig({ dir, port, upstreamPorts }))
  const args = ['-p', `${dir}/`, '-c', conf, '-e', join(dir, 'error.log')]
  const test = spawnSync(NGINX, ['-t', '-q', ...args], { encoding: 'utf8' })
  if (test.status !== 0) throw new Error(`nginx rejected its configuration: ${test.stderr}`)
  const child = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  const entry = { name: `nginx-${nginxCount}`, kind: 'nginx', child, stopSignal: 'SIGTERM' }
  processes.add(entry)
  child.once('exit', () => processes.delete(entry))
  const url = `http://127.0.0.1:${port}`
  await until(
    async () => {
      if (!alive(child)) throw new Error(`nginx exited: ${stderr}`)
      const res = await fetch(`${url}/health`).catch(() => undefined)
      await res?.body?.cancel()
      return res?.ok
    },
    { timeoutMs: 10_000, what: 'nginx answering', intervalMs: 50 },
  )
  return {
    url,
    mcpUrl: `${url}/mcp`,
    pid: child.pid,
    accessLog: join(dir, 'access.log'),
    stop: () => stopChild(child, 'SIGTERM', 3_000),
  }
}

/** The access log of an nginx: one record per request. */
function accessRecords(nginx) {
  const text = existsSync(nginx.accessLog) ? readFileSync(nginx.accessLog, 'utf8') : ''
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [msec, seconds, phase, upstream, status, upstreamStatus, method, name] = line.split('|')
      const tried = upstream === '-' ? [] : upstream.split(',').map((s) => s.trim())
      return {
        at: Number(msec) * 1000,
        /** When nginx began the request (its log line is written at the end). */
        startedAt: (Number(msec) - Number(seconds)) * 1000,
        phase,
        tried: tried.map(replicaOfAddr),
        replica: replicaOfAddr(tried.at(-1) ?? ''),
        status: Number(status),
        upstreamStatus,
        method,
        name,
      }
    })
}

function replicaOfAddr(addr) {
  const port = Number(/:(\d+)$/.exec(addr ?? '')?.[1])
  return replicaByPort.get(port)
}

// ---- MCP clients ----

/** The phase this harness is in: sent as a header, so nginx's log can be split by phase. */
let phase = 'setup'
const counters = {
  calls: 0,
  status5xx: 0,
  transportErrors: 0,
  /** Not-found-class answers nobody asked for (tool → count). */
  notFound: {},
  notFoundExpected: 0,
  toolErrors: {},
  /** Waiting job.get calls this harness repeated after a transport error. */
  waitRetries: 0,
}

/**
 * A real MCP SDK client of `url` with `key`. Its fetch notes which replica answered each request
 * (nginx's X-Upstream) and the HTTP status. `manual`: it declares form elicitation but fulfils
 * nothing, so a call opting in gets the 2026-07-28 round back (the input-rounds test's client).
 */
async function mcp(url, key, { manual = false, name = 'scale-out' } = {}) {
  const state = { last: undefined, lastStatus: undefined, served: [] }
  const tracking = async (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('x-bench-phase', phase)
    const res = await fetch(input, { ...init, headers })
    state.lastStatus = res.status
    if (res.status >= 500) counters.status5xx++
    const upstream = res.headers.get('x-upstream')
    if (upstream) {
      state.last = replicaOfAddr(upstream.split(',').at(-1).trim())
      state.served.push(state.last)
    }
    return res
  }
  const client = new Client(
    { name, version: '1.0.0' },
    {
      versionNegotiation: { mode: 'auto' },
      ...(manual && { capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false } }),
    },
  )
  if (manual) client.setRequestHandler('elicitation/create', async () => ({ action: 'cancel' }))
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      fetch: tracking,
    }),
  )
  return { client, state, close: () => client.close().catch(() => undefined) }
}

/** The call got no tool result: the request failed (an HTTP error status, a cut connection). */
class TransportError extends Error {
  constructor(name, status, cause) {
    super(`${name}: no result (HTTP ${status ?? '-'}): ${String(cause?.message ?? cause).slice(0, 160)}`, {
      cause,
    })
    this.transport = true
    this.status = status
  }
}

class ToolError extends Error {
  constructor(name, code, message) {
    super(`${name}: ${code}${message ? ` (${message})` : ''}`)
    this.code = code
  }
}

/** A tool call; a tool error is thrown as ToolError with its code, counted (not-found class apart). */
async function call(c, name, args, { expect, allow, timeout = 90_000, raw = false, retry } = {}) {
  counters.calls++
  let result
  try {
    result = await c.client.callTool(
      { name, arguments: args, ...retry },
      { timeout, ...(raw && { allowInputRequired: true }) },
    )
  } catch (error) {
    counters.transportErrors++
    throw new TransportError(name, c.state.lastStatus, error)
  }
  if (raw) return result
  if (result.isError) {
    let code = 'unknown'
    let message = ''
    try {
      const body = JSON.parse(result.content?.[0]?.text ?? '{}')
      code = body.error?.code ?? code
      message = String(body.error?.message ?? '').slice(0, 120)
    } catch {}
    if (NOT_FOUND_CLASS.has(code)) {
      if (expect === code) counters.notFoundExpected++
      else counters.notFound[name] = (counters.notFound[name] ?? 0) + 1
    } else if (expect !== code && allow !== code) {
      const kind = `${name}:${code}`
      counters.toolErrors[kind] = (counters.toolErrors[kind] ?? 0) + 1
    }
    throw new ToolError(name, code, message)
  }
  if (expect) throw new Error(`${name}: expected ${expect}, got a result`)
  return result.structuredContent
}

/** The round-robin order of the replicas behind an nginx (learnt by the alternation probe). */
let rrOrder = []

/**
 * Makes sure the next request of `c` through nginx does not land on replica `avoid`: with round
 * robin and no other traffic, the next replica is the one after the last that answered, so one
 * cheap call moves it along when that would be `avoid`. Where the call lands is recorded anyway.
 */
async function steerAwayFrom(c, avoid) {
  for (let i = 0; i < rrOrder.length + 1; i++) {
    const at = rrOrder.indexOf(c.state.last)
    const next = at < 0 ? undefined : rrOrder[(at + 1) % rrOrder.length]
    if (next !== undefined && next !== avoid) return
    await call(c, 'gateway.catalog.get', {})
  }
}

// ---- the ledger: every job any phase started ----

const ledger = []
let titleCount = 0
const newTitle = (what) => `scale ${what} ${++titleCount}`

function record(cred, title, status, expect = 'completed') {
  const entry = { cred, title, job: status.job, session: status.session, expect, deleted: false }
  ledger.push(entry)
  return entry
}

/** Follows a job with waiting job.get until it is terminal (or its deadline passed). */
async function follow(c, job, { deadlineMs = 90_000, waitMs = 20_000 } = {}) {
  const deadline = Date.now() + deadlineMs
  let status
  let transportErrors = 0
  while (Date.now() < deadline) {
    try {
      status = await call(c, 'gateway.job.get', { job, waitMs })
    } catch (error) {
      // A waiting read is safe to repeat: a transport error (a replica killed under it) is retried.
      if (!error.transport || ++transportErrors > 10) throw error
      counters.waitRetries++
      continue
    }
    if (TERMINAL.has(status.status)) return status
    if (status.status === 'input_required') return status
  }
  return status
}

// ---- phases ----

const results = {
  config: {
    smoke,
    control: CONTROL,
    replicas: REPLICAS,
    scale: SCALE,
    throughputSecondsPerRun: SECONDS,
    clients: CLIENTS,
    workflows: WORKFLOWS,
    faultSeconds: FAULT_SECONDS,
    trafficClients: TRAFFIC_CLIENTS,
    cores: (await import('node:os')).availableParallelism(),
    node: process.version,
  },
}
const check = (ok, what) => {
  if (!ok) failures.push(what)
  return ok
}

const keys = {}
let upEntry
let runtimePid

async function setUp() {
  if (!existsSync(NGINX))
    throw new Error(
      `nginx not found at ${NGINX}: install Debian's nginx (scripts/install-system-deps.sh does, as root) or pass --nginx PATH`,
    )
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build the CLI first (pnpm build)`)
  work = await mkdtemp(join(tmpdir(), 'sallyport-scale-'))
  model = await startModelServer()
  stackDirPath = join(work, 'stack')
  const init = await runCli(['init', '--dir', stackDirPath])
  if (init.code !== 0) throw new Error(`sallyport init failed: ${init.stderr}`)
  const [gatewayPort, moderatorPort] = [await freePort(), await freePort()]
  editConfig(stackDirPath, (c) => {
    c.gateway.port = gatewayPort
    c.moderator.port = moderatorPort
    c.moderator.model = `${FAKE_PROVIDER_ID}/${FAKE_MODERATION_MODEL_ID}`
    // The throughput runs measure capacity, not the per-credential rate limit (10/s, burst 300).
    Object.assign(c.gateway.limits, {
      ratePerSecond: 100_000,
      rateBurst: 1_000_000,
      concurrentWaits: 1_000,
      concurrentCalls: 1_000,
      concurrentRuns: 1_000,
    })
  })
  useScriptedModel(stackDirPath, model.baseURL)
  upEntry = await startCli('up', 'up', ['up', '--dir', stackDirPath, '--stop-grace-ms', '3000'])
  upEntry.runtimePids = () =>
    logLines(existsSync(upEntry.log) ? readFileSync(upEntry.log, 'utf8') : '')
      .filter((l) => l.event === 'child_started' && l.pid)
      .map((l) => l.pid)
  const started = now()
  await readyOf(upEntry, 120_000)
  results.config.upReadyS = round1((now() - started) / 1000)
  runtimePid = logLines(readFileSync(upEntry.log, 'utf8')).find(
    (l) => l.event === 'child_started' && l.child === 'assistant',
  )?.pid
  for (const name of [...CREDENTIALS, ROTATED]) {
    const added = await runCli(['credential', 'add', name, 'full', '--dir', stackDirPath])
    if (added.code !== 0) throw new Error(`credential add ${name} failed: ${added.stderr}`)
    keys[name] = added.stdout.trim()
  }
  if (CONTROL === 'foreign-secret') {
    foreignDir = join(work, 'foreign-stack')
    const copied = spawnSync('cp', ['-a', stackDirPath, foreignDir])
    if (copied.status !== 0) throw new Error(`copying the stack failed: ${copied.stderr}`)
    writeFileSync(join(foreignDir, 'state', 'handle-secret'), randomBytes(32), { mode: 0o600 })
  }
  const ports = []
  for (let i = 0; i < REPLICAS; i++) ports.push(await freePort())
  const t = now()
  await Promise.all(ports.map((port, i) => startReplica(i, port)))
  results.config.replicasReadyS = round1((now() - t) / 1000)
}

/** One client, calls one after another through nginx: consecutive calls change replica. */
async function alternation(nginx) {
  phase = 'alternation'
  const c = await mcp(nginx.mcpUrl, keys[CREDENTIALS[0]])
  c.state.served.length = 0
  const calls = 8 * REPLICAS
  for (let i = 0; i < calls; i++) await call(c, 'gateway.catalog.get', {})
  await c.close()
  const served = c.state.served.slice(-calls)
  let switches = 0
  for (let i = 1; i < served.length; i++) if (served[i] !== served[i - 1]) switches++
  const perReplica = Array.from({ length: REPLICAS }, (_, r) => served.filter((s) => s === r).length)
  rrOrder = served.slice(0, REPLICAS)
  results.alternation = {
    calls,
    consecutivePairs: served.length - 1,
    switches,
    perReplica,
    distinctInFirstRound: new Set(rrOrder).size,
  }
  check(
    switches === served.length - 1,
    `alternation: ${switches} of ${served.length - 1} consecutive calls switched replica`,
  )
  check(
    perReplica.every((n) => n > 0),
    `alternation: a replica got no call (${perReplica.join('/')})`,
  )
  check(new Set(rrOrder).size === REPLICAS, 'alternation: the first round did not visit every replica once')
}

/** Where each step of the cross-replica workflows was served, against the replica that issued the handle. */
const crossSteps = {}
function noteStep(kind, issuedBy, servedBy) {
  crossSteps[kind] ??= { total: 0, otherReplica: 0 }
  const s = crossSteps[kind]
  s.total++
  if (servedBy !== undefined && servedBy !== issuedBy) s.otherReplica++
}

async function workflows(nginx) {
  phase = 'workflows'
  const cred = CREDENTIALS[0]
  const c = await mcp(nginx.mcpUrl, keys[cred])
  const manual = await mcp(nginx.mcpUrl, keys[cred], { manual: true })
  const wf = { question: 0, permission: 0, rounds: 0, cancel: 0, sessions: 0 }
  for (let n = 0; n < WORKFLOWS; n++) {
    // A question: started on one replica, polled, answered and followed on others.
    {
      const marker = model.script([
        step.question({ question: 'Which colour?', header: 'Colour', options: ['Blue', 'Red'] }),
        (req) => ({ text: `answer was ${req.toolResults.join(' ').includes('Blue') ? 'Blue' : 'other'}` }),
      ])
      const title = newTitle('question')
      const run = await call(c, 'gateway.agent.run', { message: `ask me ${marker}`, title, waitMs: 0 })
      const origin = c.state.last
      record(cred, title, run)
      await steerAwayFrom(c, origin)
      const asked = await until(
        async () => {
          const s = await call(c, 'gateway.job.get', { job: run.job, waitMs: 10_000 })
          return s.status === 'input_required' ? s : TERMINAL.has(s.status) ? s : undefined
        },
        { timeoutMs: 60_000, what: 'the question' },
      )
      noteStep('job.get', origin, c.state.last)
      const ask = asked.interactions?.[0]
      if (!check(ask?.kind === 'question', `question workflow: no question (${asked.status})`)) continue
      await steerAwayFrom(c, origin)
      const answered = await call(c, 'gateway.interaction.respond', {
        interaction: ask.interaction,
        answers: [['Blue']],
      })
      noteStep('interaction.respond', origin, c.state.last)
      check(answered.accepted === true, 'question workflow: the answer was not accepted')
      await steerAwayFrom(c, origin)
      const done = await follow(c, run.job)
      noteStep('job.get', origin, c.state.last)
      check(
        done?.status === 'completed' && done.text === 'answer was Blue',
        `question workflow ended ${done?.status}`,
      )
      // The same answer again, on the replica after the one that took it: no longer pending.
      const answeredOn = c.state.last
      await steerAwayFrom(c, answeredOn)
      const again = await call(
        c,
        'gateway.interaction.respond',
        { interaction: ask.interaction, answers: [['Red']] },
        { expect: 'not_pending' },
      ).catch((error) => ({ code: error.code }))
      noteStep('interaction.respond again', answeredOn, c.state.last)
      check(
        again.code === 'not_pending',
        `question workflow: a second answer elsewhere gave ${again.code ?? 'a result'}`,
      )
      wf.question++
    }
    // A permission request (bash, `full`): approved once on another replica than the start.
    {
      const marker = model.script([
        step.bash('echo scale-out', { description: 'say it' }),
        (req) => ({ text: `ran: ${req.toolResults.join('').trim().slice(0, 20)}` }),
      ])
      const title = newTitle('permission')
      const run = await call(c, 'gateway.agent.run', { message: `run it ${marker}`, title, waitMs: 0 })
      const origin = c.state.last
      record(cred, title, run)
      await steerAwayFrom(c, origin)
      const asked = await until(
        async () => {
          const s = await call(c, 'gateway.job.get', { job: run.job, waitMs: 10_000 })
          return s.status === 'running' ? undefined : s
        },
        { timeoutMs: 60_000, what: 'the permission request' },
      )
      noteStep('job.get', origin, c.state.last)
      const ask = asked.interactions?.[0]
      if (!check(ask?.kind === 'permission', `permission workflow: no permission request (${asked.status})`))
        continue
      await steerAwayFrom(c, origin)
      await call(c, 'gateway.interaction.respond', { interaction: ask.interaction, decision: 'once' })
      noteStep('interaction.respond', origin, c.state.last)
      await steerAwayFrom(c, origin)
      const done = await follow(c, run.job)
      noteStep('job.get', origin, c.state.last)
      check(
        done?.status === 'completed' && done.text?.startsWith('ran: scale-out'),
        `permission workflow ended ${done?.status}`,
      )
      wf.permission++
    }
    // An MCP 2026-07-28 input_required round: asked by one replica, answered through another.
    {
      const marker = model.script([
        step.question({
          question: 'Deploy where?',
          header: 'Target',
          options: [
            { label: 'staging', description: 'safe' },
            { label: 'prod', description: 'live' },
          ],
        }),
        (req) => ({ text: `target: ${/staging|prod/.exec(req.toolResults.join(' '))?.[0] ?? 'none'}` }),
      ])
      const title = newTitle('round')
      const args = { message: `deploy ${marker}`, title, waitMs: 25_000 }
      const roundResult = await call(manual, 'gateway.agent.run', args, { raw: true })
      const origin = manual.state.last
      if (
        !check(
          roundResult.resultType === 'input_required',
          `round: expected input_required, got ${roundResult.resultType}`,
        )
      )
        continue
      const handles = roundResult._meta ?? {}
      if (handles['sallyport/job'])
        record(cred, title, { job: handles['sallyport/job'], session: handles['sallyport/session'] })
      await steerAwayFrom(manual, origin)
      const done = await call(manual, 'gateway.agent.run', args, {
        raw: true,
        retry: {
          requestState: roundResult.requestState,
          inputResponses: { 'q1.1': { action: 'accept', content: { answer: 'staging' } } },
        },
      })
      noteStep('round retry', origin, manual.state.last)
      check(
        !done.isError &&
          done.structuredContent?.status === 'completed' &&
          done.structuredContent?.text === 'target: staging',
        `round: the retry on another replica ended ${done.isError ? JSON.stringify(done.content?.[0]?.text).slice(0, 160) : done.structuredContent?.status}`,
      )
      // The same state replayed on the replica after the one that served the retry: refused.
      const retriedOn = manual.state.last
      await steerAwayFrom(manual, retriedOn)
      const replay = await call(manual, 'gateway.agent.run', args, {
        raw: true,
        retry: {
          requestState: roundResult.requestState,
          inputResponses: { 'q1.1': { action: 'accept', content: { answer: 'prod' } } },
        },
      })
      noteStep('round replay', retriedOn, manual.state.last)
      const replayCode = replay.isError
        ? JSON.parse(replay.content?.[0]?.text ?? '{}').error?.code
        : 'a result'
      check(replayCode === 'not_pending', `round: a replayed state on another replica gave ${replayCode}`)
      wf.rounds++
    }
    // A cancel: a slow run started on one replica, seen running on another, cancelled on another.
    {
      const marker = model.script([step.slow(['a', 'b', 'c', 'd', 'e', 'f'], 2_000)])
      const title = newTitle('cancel')
      const run = await call(c, 'gateway.agent.run', { message: `slow ${marker}`, title, waitMs: 300 })
      const origin = c.state.last
      record(cred, title, run, 'cancelled')
      await steerAwayFrom(c, origin)
      const seen = await call(c, 'gateway.job.get', { job: run.job })
      noteStep('job.get', origin, c.state.last)
      check(seen.status === 'running', `cancel workflow: the slow job was ${seen.status}`)
      await steerAwayFrom(c, origin)
      const cancelled = await call(c, 'gateway.job.cancel', { job: run.job })
      noteStep('job.cancel', origin, c.state.last)
      check(cancelled.status === 'cancelled', 'cancel workflow: not cancelled')
      const canceller = c.state.last
      await steerAwayFrom(c, canceller)
      const after = await call(c, 'gateway.job.get', { job: run.job, waitMs: 5_000 })
      noteStep('job.get after cancel', canceller, c.state.last)
      check(after.status === 'cancelled', `cancel workflow: another replica says ${after.status}`)
      wf.cancel++
    }
    // Sessions: a run's session listed, forked, read and deleted across replicas.
    {
      const marker = model.script([{ text: 'to be forked' }])
      const title = newTitle('fork-source')
      const run = await call(c, 'gateway.agent.run', { message: `fork me ${marker}`, title, waitMs: 20_000 })
      const origin = c.state.last
      record(cred, title, run)
      check(run.status === 'completed', `sessions workflow: the run was ${run.status}`)
      await steerAwayFrom(c, origin)
      const titles = await listTitles(c)
      noteStep('session.list', origin, c.state.last)
      check(titles.has(title), 'sessions workflow: a new session is missing from session.list')
      await steerAwayFrom(c, origin)
      const fork = await call(c, 'gateway.session.fork', { session: run.session })
      noteStep('session.fork', origin, c.state.last)
      const forkedOn = c.state.last
      const forkHandle = fork.session.session
      await steerAwayFrom(c, forkedOn)
      const view = await call(c, 'gateway.session.get', { session: forkHandle, include: ['messages'] })
      noteStep('session.get', forkedOn, c.state.last)
      check(view.messages?.at(-1)?.text === 'to be forked', 'sessions workflow: the fork lacks the messages')
      await steerAwayFrom(c, forkedOn)
      const deleted = await call(c, 'gateway.session.delete', { session: forkHandle })
      noteStep('session.delete', forkedOn, c.state.last)
      check(deleted.deleted === true, 'sessions workflow: the fork was not deleted')
      const deletedOn = c.state.last
      await steerAwayFrom(c, deletedOn)
      await call(c, 'gateway.session.get', { session: forkHandle }, { expect: 'not_found' }).catch(
        (error) => {
          check(error.code === 'not_found', `sessions workflow: a deleted fork read gave ${error.message}`)
        },
      )
      noteStep('session.get after delete', deletedOn, c.state.last)
      // The source stays readable everywhere.
      for (let r = 0; r < REPLICAS; r++) {
        await call(c, 'gateway.session.get', { session: run.session })
        noteStep('session.get', origin, c.state.last)
      }
      wf.sessions++
    }
  }
  await c.close()
  await manual.close()
  results.workflows = { done: wf, steps: crossSteps }
  for (const [kind, s] of Object.entries(crossSteps))
    check(s.otherReplica > 0, `workflows: no ${kind} was served by another replica than the one that issued`)
}

/**
 * Two runs on one session at the same moment, sent through nginx (so they land on two replicas)
 * and, as the control, both straight to one replica. In one process the second is refused
 * (`busy`); that check is per process. Reported, not checked: how often both were accepted, and
 * how the jobs ended.
 */
async function concurrentRuns(nginx) {
  phase = 'concurrent-runs'
  const cred = CREDENTIALS[0]
  const tries = smoke ? 3 : 8
  const out = {}
  for (const [where, url] of [
    ['twoReplicas', nginx.mcpUrl],
    ['oneReplica', replicas[0].mcpUrl],
  ]) {
    const [a, b] = [await mcp(url, keys[cred]), await mcp(url, keys[cred])]
    const tally = { tries, bothAccepted: 0, oneBusy: 0, other: {}, sameReplica: 0, ends: {}, pairs: [] }
    const title = newTitle(`concurrent ${where}`)
    const first = await call(a, 'gateway.agent.run', {
      message: `first ${model.script([{ text: 'first' }])}`,
      title,
      waitMs: 20_000,
    })
    record(cred, title, first)
    for (let i = 0; i < tries; i++) {
      const marker = model.script([{ text: `concurrent ${i}`, delayMs: 300 }])
      const settled = await Promise.allSettled(
        [a, b].map((c) =>
          call(
            c,
            'gateway.agent.run',
            { message: `both ${marker}`, session: first.session, waitMs: 0 },
            { allow: 'busy' },
          ),
        ),
      )
      if (where === 'twoReplicas' && a.state.last === b.state.last) tally.sameReplica++
      const accepted = settled.filter((r) => r.status === 'fulfilled').map((r) => r.value)
      const codes = settled.filter((r) => r.status === 'rejected').map((r) => r.reason?.code ?? 'error')
      if (accepted.length === 2) tally.bothAccepted++
      else if (accepted.length === 1 && codes[0] === 'busy') tally.oneBusy++
      else {
        const kind = `${accepted.length} accepted, ${codes.join('/')}`
        tally.other[kind] = (tally.other[kind] ?? 0) + 1
      }
      const pair = []
      for (const run of accepted) {
        record(cred, title, run, 'any')
        const end = await follow(a, run.job, { deadlineMs: 120_000 })
        const kind = `${end?.status ?? 'none'}${end?.status === 'completed' && end.text !== `concurrent ${i}` ? ' (other text)' : ''}`
        tally.ends[kind] = (tally.ends[kind] ?? 0) + 1
        pair.push(kind)
      }
      tally.pairs.push(pair.join(' + '))
    }
    await a.close()
    await b.close()
    if (where === 'oneReplica') delete tally.sameReplica
    out[where] = tally
  }
  results.concurrentRunsOnOneSession = out
}

/** Every session title the client's credential can list (all pages). */
async function listTitles(c) {
  const titles = new Set()
  let cursor
  for (let page = 0; page < 100; page++) {
    const list = await call(c, 'gateway.session.list', { limit: 100, ...(cursor && { cursor }) })
    for (const s of list.sessions) titles.add(s.title)
    cursor = list.nextCursor
    if (!cursor) break
  }
  return titles
}

/** A completed job per credential, for the cheap reads of the throughput runs. */
const prepared = {}
async function prepare(nginx) {
  phase = 'prepare'
  await Promise.all(
    CREDENTIALS.map(async (cred) => {
      const c = await mcp(nginx.mcpUrl, keys[cred])
      const marker = model.script([{ text: `ready for ${cred}` }])
      const title = newTitle('prepared')
      const run = await call(c, 'gateway.agent.run', { message: `prepare ${marker}`, title, waitMs: 20_000 })
      record(cred, title, run)
      const done = run.status === 'completed' ? run : await follow(c, run.job)
      check(done?.status === 'completed', `prepare: the job of ${cred} ended ${done?.status}`)
      prepared[cred] = { job: run.job, session: run.session }
      await c.close()
    }),
  )
}

/** K clients, a fixed mix of cheap calls, through an nginx in front of the first `n` replicas. */
const MIX_CALLS = {
  reads: (p) => [
    ['gateway.catalog.get', {}],
    ['gateway.session.get', { session: p.session }],
    ['gateway.job.get', { job: p.job }],
  ],
  catalog: () => [['gateway.catalog.get', {}]],
}

async function throughputRun(n, index, mixName) {
  const nginx = await startNginx(replicas.slice(0, n).map((r) => r.port))
  phase = `throughput-${mixName}-${index}`
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, (_, i) => mcp(nginx.mcpUrl, keys[CREDENTIALS[i % CREDENTIALS.length]])),
  )
  const creds = clients.map((_, i) => CREDENTIALS[i % CREDENTIALS.length])
  const latencies = []
  let calls = 0
  let errors = 0
  let measuring = false
  const warmUpEnd = now() + 1_500
  const end = warmUpEnd + SECONDS * 1000
  const mix = (i) => MIX_CALLS[mixName](prepared[creds[i]])
  const pids = {
    gateways: replicas.slice(0, n).map((r) => r.pid),
    idleReplicas: replicas.slice(n).map((r) => r.pid),
    runtime: runtimePid,
    nginx: [nginx.pid, ...(await childrenOf(nginx.pid))],
  }
  const cpu = async () => ({
    gateways: (await Promise.all(pids.gateways.map(cpuMs))).reduce((a, b) => a + (b ?? 0), 0),
    runtime: (await cpuMs(pids.runtime)) ?? 0,
    nginx: (await Promise.all(pids.nginx.map(cpuMs))).reduce((a, b) => a + (b ?? 0), 0),
    idleReplicas: (await Promise.all(pids.idleReplicas.map(cpuMs))).reduce((a, b) => a + (b ?? 0), 0),
    clients: (process.cpuUsage().user + process.cpuUsage().system) / 1000,
    machine: await machineBusyMs(),
  })
  let cpu0
  let started
  const starter = (async () => {
    while (now() < warmUpEnd) await sleep(Math.max(1, warmUpEnd - now()))
    cpu0 = await cpu()
    started = now()
    measuring = true
  })()
  await Promise.all(
    clients.map(async (c, i) => {
      const calls_ = mix(i)
      for (let k = i; now() < end; k++) {
        const [name, args] = calls_[k % calls_.length]
        const t = now()
        try {
          await call(c, name, args, { timeout: 30_000 })
          if (measuring) {
            calls++
            latencies.push(now() - t)
          }
        } catch {
          if (measuring) errors++
        }
      }
    }),
  )
  await starter
  const elapsed = (now() - started) / 1000
  const cpu1 = await cpu()
  await Promise.all(clients.map((c) => c.close()))
  await nginx.stop()
  latencies.sort((a, b) => a - b)
  const records = accessRecords(nginx).filter((r) => r.phase === phase)
  const perReplica = Array.from({ length: n }, (_, r) => records.filter((x) => x.replica === r).length)
  const share = (ms) => round2(ms / (elapsed * 1000))
  return {
    replicas: n,
    callsPerSecond: round1(calls / elapsed),
    calls,
    errors,
    p50Ms: round1(quantile(latencies, 0.5) ?? 0),
    p99Ms: round1(quantile(latencies, 0.99) ?? 0),
    perReplica,
    // CPU used during the measured window, in cores (1.0 = one core busy the whole time).
    cores: {
      gateways: share(cpu1.gateways - cpu0.gateways),
      runtime: share(cpu1.runtime - cpu0.runtime),
      nginx: share(cpu1.nginx - cpu0.nginx),
      clients: share(cpu1.clients - cpu0.clients),
      idleReplicas: share(cpu1.idleReplicas - cpu0.idleReplicas),
      // Every process of the machine (other work on it included): 2.0 is both cores busy.
      machine: share(cpu1.machine - cpu0.machine),
    },
    gatewayCpuMsPerCall: round2((cpu1.gateways - cpu0.gateways) / Math.max(1, calls)),
    runtimeCpuMsPerCall: round2((cpu1.runtime - cpu0.runtime) / Math.max(1, calls)),
  }
}

async function throughput() {
  results.throughput = { clients: CLIENTS, seconds: SECONDS, order: ORDER }
  for (const mixName of MIXES) {
    const runs = []
    for (const [i, n] of ORDER.entries()) runs.push(await throughputRun(n, i, mixName))
    const mean = (n, f) => {
      const of = runs.filter((r) => r.replicas === n)
      return of.reduce((a, r) => a + f(r), 0) / of.length
    }
    const base = mean(1, (r) => r.callsPerSecond)
    results.throughput[mixName] = {
      calls: MIX_CALLS[mixName]({ session: '-', job: '-' }).map(([name]) => name),
      runs,
      byReplicas: Object.fromEntries(
        SCALE.map((n) => [
          n,
          {
            callsPerSecond: round1(mean(n, (r) => r.callsPerSecond)),
            ratio: round2(mean(n, (r) => r.callsPerSecond) / base),
            p50Ms: round1(mean(n, (r) => r.p50Ms)),
            p99Ms: round1(mean(n, (r) => r.p99Ms)),
            gatewayCores: round2(mean(n, (r) => r.cores.gateways)),
            runtimeCores: round2(mean(n, (r) => r.cores.runtime)),
            nginxCores: round2(mean(n, (r) => r.cores.nginx)),
            clientCores: round2(mean(n, (r) => r.cores.clients)),
            machineCores: round2(mean(n, (r) => r.cores.machine)),
            gatewayCpuMsPerCall: round2(mean(n, (r) => r.gatewayCpuMsPerCall)),
            runtimeCpuMsPerCall: round2(mean(n, (r) => r.runtimeCpuMsPerCall)),
          },
        ]),
      ),
    }
    for (const r of runs) {
      check(r.errors === 0, `throughput (${mixName}) with ${r.replicas} replicas: ${r.errors} failed calls`)
      check(
        r.perReplica.every((count) => count > 0),
        `throughput (${mixName}) with ${r.replicas} replicas: a replica got no call (${r.perReplica.join('/')})`,
      )
    }
  }
}

/** POSTs a 2025-era tools/call of catalog.get straight to a replica; returns the HTTP status. */
async function probe(port, key) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'gateway.catalog.get', arguments: {} },
      }),
      signal: AbortSignal.timeout(5_000),
    })
    await res.text()
    return res.status
  } catch {
    return 0
  }
}

/** Steady traffic of some credentials through nginx until `stop()`: calls and errors counted. */
function steadyTraffic(nginx, creds, perCred) {
  let running = true
  const tally = { calls: 0, errors: 0, errorKinds: {} }
  const done = (async () => {
    const clients = []
    for (const cred of creds)
      for (let i = 0; i < perCred; i++) clients.push({ cred, c: await mcp(nginx.mcpUrl, keys[cred]) })
    await Promise.all(
      clients.map(async ({ cred, c }, i) => {
        const mix = [
          ['gateway.catalog.get', {}],
          ['gateway.session.get', { session: prepared[cred].session }],
          ['gateway.job.get', { job: prepared[cred].job }],
        ]
        for (let k = i; running; k++) {
          const [name, args] = mix[k % mix.length]
          try {
            await call(c, name, args, { timeout: 30_000 })
            tally.calls++
          } catch (error) {
            tally.errors++
            const kind = String(error.code ?? error.status ?? error.message).slice(0, 60)
            tally.errorKinds[kind] = (tally.errorKinds[kind] ?? 0) + 1
          }
        }
        await c.close()
      }),
    )
  })()
  return {
    tally,
    stop: async () => {
      running = false
      await done
    },
  }
}

async function rotation(nginx) {
  phase = 'rotation'
  const oldKey = keys[ROTATED]
  // A session of the rotated credential, issued before the rotation.
  const before = await mcp(nginx.mcpUrl, oldKey)
  const marker = model.script([{ text: 'before the rotation' }])
  const title = newTitle('rotation')
  const run = await call(before, 'gateway.agent.run', { message: `before ${marker}`, title, waitMs: 20_000 })
  record(ROTATED, title, run)
  await before.close()
  for (const r of replicas)
    check(
      (await probe(r.port, oldKey)) === 200,
      `rotation: replica ${r.index} refused the key before rotating`,
    )
  const traffic = steadyTraffic(nginx, CREDENTIALS.slice(0, 3), 2)
  await until(() => traffic.tally.calls >= 50, { timeoutMs: 30_000, what: 'steady traffic' })
  const callsBefore = traffic.tally.calls
  // Each replica is probed directly, one request at a time: the old key from before the rotation
  // starts, the new one as soon as the command has printed it. Times are wall-clock (ms since the
  // epoch), to compare with the time the store wrote the new key (its files' mtime).
  const perReplica = replicas.map((r) => ({
    index: r.index,
    port: r.port,
    probes: 0,
    oldRefusedAt: undefined,
    newAcceptedAt: undefined,
    oldAcceptedAfterRefusal: 0,
    newRefusedAfterAcceptance: 0,
  }))
  let newKey
  let probing = true
  const probes = Promise.all(
    perReplica.map(async (p) => {
      while (probing) {
        p.probes++
        const oldStatus = await probe(p.port, oldKey)
        const t = Date.now()
        if (oldStatus === 200 && p.oldRefusedAt !== undefined) p.oldAcceptedAfterRefusal++
        else if (oldStatus === 401 && p.oldRefusedAt === undefined) p.oldRefusedAt = t
        if (newKey !== undefined) {
          const newStatus = await probe(p.port, newKey)
          const t2 = Date.now()
          if (newStatus === 200 && p.newAcceptedAt === undefined) p.newAcceptedAt = t2
          else if (newStatus !== 200 && p.newAcceptedAt !== undefined) p.newRefusedAfterAcceptance++
        }
        await sleep(20)
      }
    }),
  )
  const rotateStart = Date.now()
  const rotated = await runCli(['credential', 'rotate', ROTATED, '--dir', stackDir()])
  const rotateExit = Date.now()
  if (!check(rotated.code === 0, `rotation: credential rotate failed (${rotated.stderr.slice(0, 200)})`)) {
    probing = false
    await probes
    await traffic.stop()
    return
  }
  newKey = rotated.stdout.trim()
  keys[ROTATED] = newKey
  // When the store wrote the new key: the later of the key file's and the generation file's mtime.
  const credentialsDir = join(stackDir(), 'state', 'credentials')
  const mtimes = await Promise.all(
    [join(credentialsDir, ROTATED, 'key'), join(credentialsDir, '.generation')].map((f) =>
      stat(f).then(
        (s) => s.mtimeMs,
        () => undefined,
      ),
    ),
  )
  const writtenAt = Math.max(...mtimes.filter((m) => m !== undefined))
  let converged
  try {
    converged = await until(
      () =>
        perReplica.every((p) => p.oldRefusedAt !== undefined && p.newAcceptedAt !== undefined)
          ? Math.max(...perReplica.map((p) => Math.max(p.oldRefusedAt, p.newAcceptedAt)))
          : undefined,
      { timeoutMs: ROTATION_DEADLINE_MS, what: 'the rotation on every replica', intervalMs: 20 },
    )
  } catch {}
  // One more second of probes: nothing may flip back.
  const settleEnd = Date.now() + 1_000
  await until(() => Date.now() >= settleEnd, { timeoutMs: 2_000, what: 'the settle second', intervalMs: 50 })
  probing = false
  await probes
  await traffic.stop()
  // Handles issued before the rotation work with the new key (same identity), through nginx.
  const after = await mcp(nginx.mcpUrl, newKey)
  const view = await call(after, 'gateway.session.get', { session: run.session })
  const job = await call(after, 'gateway.job.get', { job: run.job })
  await after.close()
  const rel = (t) => (t === undefined ? undefined : Math.round(t - writtenAt))
  results.rotation = {
    otherCredentials: 3,
    trafficCalls: traffic.tally.calls,
    trafficCallsDuringRotation: traffic.tally.calls - callsBefore,
    trafficErrors: traffic.tally.errors,
    trafficErrorKinds: traffic.tally.errorKinds,
    commandMs: rotateExit - rotateStart,
    // The command wrote the new key this long after it started (node start-up, the store's lock).
    writtenAfterCommandStartMs: Math.round(writtenAt - rotateStart),
    // From the write: the old key refused, the new key accepted, per replica (probed directly).
    perReplica: perReplica.map((p) => ({
      replica: p.index,
      probes: p.probes,
      oldRefusedMs: rel(p.oldRefusedAt),
      newAcceptedMs: rel(p.newAcceptedAt),
      oldAcceptedAfterRefusal: p.oldAcceptedAfterRefusal,
      newRefusedAfterAcceptance: p.newRefusedAfterAcceptance,
    })),
    everyReplicaMs: rel(converged),
    everyReplicaAfterCommandExitMs: converged === undefined ? undefined : Math.round(converged - rotateExit),
    handlesAfterRotation: view.session?.title === title && job.status === 'completed',
  }
  check(converged !== undefined, `rotation: not effective on every replica within ${ROTATION_DEADLINE_MS} ms`)
  if (converged !== undefined)
    check(
      converged - writtenAt <= ROTATION_BOUND_MS,
      `rotation: took ${Math.round(converged - writtenAt)} ms from the write (bound ${ROTATION_BOUND_MS} ms)`,
    )
  for (const p of perReplica) {
    check(
      p.oldAcceptedAfterRefusal === 0,
      `rotation: replica ${p.index} accepted the old key after refusing it`,
    )
    check(
      p.newRefusedAfterAcceptance === 0,
      `rotation: replica ${p.index} refused the new key after accepting it`,
    )
  }
  check(traffic.tally.errors === 0, `rotation: ${traffic.tally.errors} errors in other credentials' traffic`)
  check(
    results.rotation.handlesAfterRotation,
    'rotation: handles issued before the rotation failed with the new key',
  )
}

async function killAndRestart(nginx) {
  phase = 'fault'
  const victim = replicas[0]
  const cred = CREDENTIALS[1]
  // Handles issued by the victim itself (addressed directly): a completed job and its session,
  // and two pending questions (one to answer on the restarted replica, one through nginx).
  const direct = await mcp(victim.mcpUrl, keys[cred])
  const issued = {}
  {
    const title = newTitle('issued-completed')
    const marker = model.script([{ text: 'issued before the kill' }])
    const run = await call(direct, 'gateway.agent.run', {
      message: `before ${marker}`,
      title,
      waitMs: 20_000,
    })
    record(cred, title, run)
    issued.completed = { ...run, title }
    for (const which of ['askDirect', 'askNginx']) {
      const title2 = newTitle(`issued-${which}`)
      const ask = model.script([
        step.question({ question: `Continue ${which}?`, header: 'Go', options: ['Yes', 'No'] }),
        (req) => ({ text: `went on: ${req.toolResults.join(' ').includes('Yes') ? 'Yes' : 'No'}` }),
      ])
      const asked = await call(direct, 'gateway.agent.run', {
        message: `ask ${ask}`,
        title: title2,
        waitMs: 20_000,
      })
      record(cred, title2, asked)
      check(asked.status === 'input_required', `fault: the question before the kill was ${asked.status}`)
      issued[which] = { ...asked, title: title2, interaction: asked.interactions?.[0]?.interaction }
    }
  }
  await direct.close()

  // A slow job whose waiters long-poll through nginx the whole time (cancelled at the end).
  const starter = await mcp(nginx.mcpUrl, keys[cred])
  const slowMarker = model.script([
    step.slow(
      Array.from({ length: 40 }, (_, i) => `s${i} `),
      1_500,
    ),
  ])
  const slowTitle = newTitle('slow')
  const slow = await call(starter, 'gateway.agent.run', {
    message: `slow ${slowMarker}`,
    title: slowTitle,
    waitMs: 0,
  })
  const slowEntry = record(cred, slowTitle, slow, 'cancelled')

  let running = true
  const seen = {
    calls: 0,
    errorsByKind: {},
    jobsStarted: 0,
    jobsCompleted: 0,
    runsCutByKill: [],
  }
  const waitRetriesBefore = counters.waitRetries
  const noteError = (error, name) => {
    const kind = `${name} ${error.transport ? `HTTP ${error.status ?? '?'}` : error.code}`
    seen.errorsByKind[kind] = (seen.errorsByKind[kind] ?? 0) + 1
  }
  const creds = CREDENTIALS.slice(0, 3)
  const traffic = Array.from({ length: TRAFFIC_CLIENTS }, (_, i) => ({ i, cred: creds[i % creds.length] }))
  const loops = traffic.map(async ({ i, cred: cr }) => {
    const c = await mcp(nginx.mcpUrl, keys[cr])
    const role = i % 3 // 0: jobs, 1: cheap reads, 2: long-poll waiters
    while (running) {
      if (role === 0) {
        const title = newTitle(`fault-job ${cr}`)
        const marker = model.script([{ text: `fault job ${title}`, delayMs: 100 + ((i * 53) % 400) }])
        let run
        try {
          run = await call(c, 'gateway.agent.run', { message: `job ${marker}`, title, waitMs: 0 })
          seen.calls++
        } catch (error) {
          noteError(error, 'agent.run')
          if (error.transport) seen.runsCutByKill.push({ cred: cr, title })
          continue
        }
        seen.jobsStarted++
        const entry = record(cr, title, run)
        entry.text = `fault job ${title}`
        const end = await follow(c, run.job, { waitMs: 5_000 }).catch((error) => {
          noteError(error, 'job.get')
          return undefined
        })
        if (end?.status === 'completed') seen.jobsCompleted++
      } else if (role === 1) {
        for (const [name, args] of [
          ['gateway.catalog.get', {}],
          ['gateway.session.get', { session: prepared[cr].session }],
          ['gateway.job.get', { job: prepared[cr].job }],
          ['gateway.session.list', { limit: 5 }],
        ]) {
          try {
            await call(c, name, args, { timeout: 30_000 })
            seen.calls++
          } catch (error) {
            noteError(error, name.replace('gateway.', ''))
          }
        }
      } else {
        const own = cr === cred ? slow.job : prepared[cr].job
        try {
          await call(c, 'gateway.job.get', { job: own, waitMs: 3_000 }, { timeout: 30_000 })
          seen.calls++
        } catch (error) {
          noteError(error, 'job.get (waiting)')
        }
      }
    }
    await c.close()
  })

  const t0 = now()
  const at = async (ms) => {
    while (now() - t0 < ms) await sleep(Math.min(200, ms - (now() - t0)))
  }
  await at((FAULT_SECONDS * 1000) / 3)
  const killedAt = now()
  const killedEpoch = Date.now()
  const victimEntry = victim.entry
  const exited = new Promise((resolve) => victimEntry.child.once('exit', resolve))
  victimEntry.child.kill('SIGKILL')
  await exited
  await at((FAULT_SECONDS * 1000) / 2)
  const restartAt = now()
  const restarted = await startReplica(victim.index, victim.port)
  const readyAt = now()
  const readyEpoch = Date.now()
  // nginx takes the replica back after its fail_timeout: wait until it served traffic again.
  let backAt
  try {
    backAt = await until(
      () =>
        accessRecords(nginx).find((r) => r.replica === victim.index && r.startedAt >= readyEpoch)?.startedAt,
      { timeoutMs: 20_000, what: 'nginx routing to the restarted replica', intervalMs: 100 },
    )
  } catch {}
  await at(FAULT_SECONDS * 1000)
  running = false
  await Promise.all(loops)

  // Every handle the killed process issued, on the restarted replica directly…
  const again = await mcp(restarted.mcpUrl, keys[cred])
  const handleChecks = {}
  const tryCheck = async (name, fn) => {
    try {
      handleChecks[name] = (await fn()) === true
    } catch (error) {
      handleChecks[name] = false
      handleChecks[`${name}Error`] = String(error.message).slice(0, 120)
    }
  }
  await tryCheck('restarted: job.get completed job', async () => {
    const s = await call(again, 'gateway.job.get', { job: issued.completed.job })
    return s.status === 'completed' && s.text === 'issued before the kill'
  })
  await tryCheck('restarted: session.get', async () => {
    const s = await call(again, 'gateway.session.get', { session: issued.completed.session })
    return s.session?.title === issued.completed.title
  })
  await tryCheck('restarted: job.get pending question', async () => {
    const s = await call(again, 'gateway.job.get', { job: issued.askDirect.job })
    return s.status === 'input_required'
  })
  await tryCheck('restarted: interaction.respond', async () => {
    const s = await call(again, 'gateway.interaction.respond', {
      interaction: issued.askDirect.interaction,
      answers: [['Yes']],
    })
    return s.accepted === true
  })
  await tryCheck('restarted: the answered job completes', async () => {
    const s = await follow(again, issued.askDirect.job)
    return s?.status === 'completed' && s.text === 'went on: Yes'
  })
  await again.close()
  // …and through nginx.
  const via = await mcp(nginx.mcpUrl, keys[cred])
  await tryCheck('nginx: job.get completed job', async () => {
    const s = await call(via, 'gateway.job.get', { job: issued.completed.job })
    return s.status === 'completed'
  })
  await tryCheck('nginx: session.get', async () => {
    const s = await call(via, 'gateway.session.get', { session: issued.completed.session })
    return s.session?.title === issued.completed.title
  })
  await tryCheck('nginx: interaction.respond', async () => {
    const s = await call(via, 'gateway.interaction.respond', {
      interaction: issued.askNginx.interaction,
      answers: [['No']],
    })
    return s.accepted === true
  })
  await tryCheck('nginx: the answered job completes', async () => {
    const s = await follow(via, issued.askNginx.job)
    return s?.status === 'completed' && s.text === 'went on: No'
  })
  // The slow job's waiters rode through the kill; it is cancelled now.
  const cancelled = await call(starter, 'gateway.job.cancel', { job: slow.job }).catch((e) => ({
    status: e.code,
  }))
  if (cancelled.status !== 'cancelled') slowEntry.expect = 'any'
  await starter.close()
  // Runs whose agent.run the kill cut: the client never got a handle; did the run happen?
  const titles = {}
  for (const cr of creds) {
    const c = await mcp(nginx.mcpUrl, keys[cr])
    titles[cr] = await listTitles(c)
    await c.close()
  }
  const cutVisible = seen.runsCutByKill.filter(({ cred: cr, title }) => titles[cr].has(title)).length
  await via.close()

  const records = accessRecords(nginx).filter((r) => r.phase === 'fault')
  const killWindow = records.filter((r) => r.startedAt >= killedEpoch && r.startedAt <= readyEpoch)
  // Requests the victim was serving when it was killed: moved to another replica, or failed.
  const inFlight = records.filter(
    (r) => r.startedAt < killedEpoch && r.at >= killedEpoch && r.tried.includes(victim.index),
  )
  results.fault = {
    seconds: FAULT_SECONDS,
    clients: TRAFFIC_CLIENTS,
    victim: victim.index,
    killAtS: round1((killedAt - t0) / 1000),
    restartAtS: round1((restartAt - t0) / 1000),
    restartReadyMs: Math.round(readyAt - restartAt),
    backInRotationMsAfterReady: backAt === undefined ? undefined : Math.round(backAt - readyEpoch),
    calls: seen.calls,
    jobsStarted: seen.jobsStarted,
    jobsCompleted: seen.jobsCompleted,
    clientErrors: seen.errorsByKind,
    waitingReadsRepeatedByClients: counters.waitRetries - waitRetriesBefore,
    runsCutByKill: seen.runsCutByKill.length,
    runsCutByKillThatRan: cutVisible,
    nginx: {
      requests: records.length,
      whileDown: killWindow.length,
      servedByVictimWhileDown: killWindow.filter((r) => r.replica === victim.index && r.status < 500).length,
      inFlightAtKill: inFlight.length,
      inFlightAtKillMoved: inFlight.filter((r) => r.tried.length > 1 && r.status < 500).length,
      inFlightAtKillFailed: inFlight.filter((r) => r.status >= 500).length,
      retriedOnAnotherReplica: records.filter((r) => r.tried.length > 1).length,
      status502: records.filter((r) => r.status === 502).length,
      status502ByTool: records
        .filter((r) => r.status === 502)
        .reduce((acc, r) => {
          acc[r.name || r.method || '-'] = (acc[r.name || r.method || '-'] ?? 0) + 1
          return acc
        }, {}),
    },
    handles: handleChecks,
  }
  for (const [name, ok] of Object.entries(handleChecks))
    if (!name.endsWith('Error'))
      check(
        ok,
        `fault: ${name} failed${handleChecks[`${name}Error`] ? `: ${handleChecks[`${name}Error`]}` : ''}`,
      )
  check(backAt !== undefined, 'fault: nginx never routed to the restarted replica')
  // A read is never lost to the kill: nginx moves it to another replica.
  const readErrors = Object.entries(seen.errorsByKind).filter(
    ([kind]) => /^(catalog\.get|session\.get|session\.list|job\.get)/.test(kind) && !/not_found/.test(kind),
  )
  if (results.fault.waitingReadsRepeatedByClients > 0)
    readErrors.push([
      'job.get (waiting, repeated by the client)',
      results.fault.waitingReadsRepeatedByClients,
    ])
  check(
    readErrors.length === 0,
    `fault: read calls failed across the kill (${readErrors.map(([k, v]) => `${k}: ${v}`).join(', ')})`,
  )
}

/** Every job of the ledger: terminal, as expected, visible through nginx and on every replica. */
async function verifyLedger(nginx) {
  phase = 'verify'
  const byCred = groupBy(ledger, (e) => e.cred)
  const outcome = { jobs: ledger.length, terminal: 0, lost: 0, unexpected: 0, invisible: 0, notListed: 0 }
  const problems = []
  for (const [cred, entries] of byCred) {
    const c = await mcp(nginx.mcpUrl, keys[cred])
    const direct = await Promise.all(replicas.map((r) => mcp(r.mcpUrl, keys[cred])))
    for (const [i, e] of entries.entries()) {
      let s = await call(c, 'gateway.job.get', { job: e.job }).catch((error) => ({
        status: `error ${error.code}`,
      }))
      if (!TERMINAL.has(s.status) && s.status === 'running')
        s = (await follow(c, e.job, { deadlineMs: 60_000 })) ?? s
      if (TERMINAL.has(s.status)) outcome.terminal++
      else {
        outcome.lost++
        problems.push(`${e.title}: ${s.status}`)
      }
      const expected =
        e.expect === 'any' ? true : s.status === e.expect && (e.text === undefined || s.text === e.text)
      if (TERMINAL.has(s.status) && !expected) {
        outcome.unexpected++
        problems.push(`${e.title}: ${s.status}, expected ${e.expect}`)
      }
      // Visible on every replica directly (all of them in smoke, a sample of each credential's otherwise).
      if (smoke || i % 5 === 0)
        for (const d of direct) {
          const ds = await call(d, 'gateway.job.get', { job: e.job }).catch((error) => ({
            status: `error ${error.code}`,
          }))
          if (ds.status !== s.status) {
            outcome.invisible++
            problems.push(`${e.title}: ${ds.status} on a replica, ${s.status} through nginx`)
          }
        }
    }
    const titles = await listTitles(c)
    for (const e of entries)
      if (!e.deleted && !titles.has(e.title)) {
        outcome.notListed++
        problems.push(`${e.title}: not in session.list`)
      }
    await c.close()
    await Promise.all(direct.map((d) => d.close()))
  }
  results.ledger = { ...outcome, problems: problems.slice(0, 10) }
  check(outcome.lost === 0, `ledger: ${outcome.lost} lost jobs (${problems.slice(0, 3).join('; ')})`)
  check(outcome.unexpected === 0, `ledger: ${outcome.unexpected} jobs ended otherwise than expected`)
  check(outcome.invisible === 0, `ledger: ${outcome.invisible} job reads differ between replicas`)
  check(outcome.notListed === 0, `ledger: ${outcome.notListed} sessions missing from session.list`)
}

function groupBy(items, key) {
  const map = new Map()
  for (const item of items) {
    const k = key(item)
    if (!map.has(k)) map.set(k, [])
    map.get(k).push(item)
  }
  return map
}

// ---- the run ----

const watchdog = setTimeout(() => {
  console.error(`scale-out: over its ${OVERALL_MS / 1000} s bound, stopping everything`)
  failures.push(`over the ${OVERALL_MS / 1000} s bound`)
  cleanup().finally(() => {
    console.log(`scale-out${smoke ? ' smoke' : ''} FAILED: ${failures.join('; ')}`)
    process.exit(1)
  })
}, OVERALL_MS)
watchdog.unref()

let fatal
const timings = {}
const timed = async (name, fn) => {
  const t = now()
  try {
    return await fn()
  } finally {
    timings[name] = round1((now() - t) / 1000)
  }
}
try {
  await timed('setUp', setUp)
  const nginx = await startNginx(replicas.map((r) => r.port))
  await timed('alternation', () => alternation(nginx))
  await timed('workflows', () => workflows(nginx))
  await timed('concurrentRuns', () => concurrentRuns(nginx))
  await timed('prepare', () => prepare(nginx))
  await timed('throughput', throughput)
  await timed('rotation', () => rotation(nginx))
  await timed('fault', () => killAndRestart(nginx))
  await timed('verify', () => verifyLedger(nginx))
  results.nginx = {
    requests: accessRecords(nginx).length,
    perReplica: replicas.map((r) => accessRecords(nginx).filter((x) => x.replica === r.index).length),
  }
  await nginx.stop()
} catch (error) {
  fatal = error
  failures.push(
    `stopped by an error: ${String(error?.message ?? error)
      .split('\n')[0]
      .slice(0, 300)}`,
  )
} finally {
  clearTimeout(watchdog)
  await cleanup()
}

results.errors = {
  calls: counters.calls,
  notFound: Object.values(counters.notFound).reduce((a, b) => a + b, 0),
  notFoundByTool: counters.notFound,
  notFoundExpected: counters.notFoundExpected,
  status5xx: counters.status5xx,
  transportErrors: counters.transportErrors,
  waitRetries: counters.waitRetries,
  toolErrors: counters.toolErrors,
}
results.timingsS = timings
check(
  results.errors.notFound === 0,
  `${results.errors.notFound} not-found-class errors (${JSON.stringify(counters.notFound)})`,
)

console.log(JSON.stringify(results, null, 1))
const t = results.throughput
for (const mixName of MIXES)
  if (t?.[mixName])
    console.log(
      `scale-out: throughput (${t[mixName].calls.map((c) => c.replace('gateway.', '')).join('/')}), ${t.clients} clients, ${t.seconds} s per run, runs ${t.order.join(',')}: ${SCALE.map(
        (n) => {
          const b = t[mixName].byReplicas[n]
          return `${n} gateway${n > 1 ? 's' : ''} ${b.callsPerSecond} calls/s (${b.ratio}x, p50 ${b.p50Ms} ms; cores: gateways ${b.gatewayCores}, runtime ${b.runtimeCores}, nginx ${b.nginxCores}, clients ${b.clientCores}, whole machine ${b.machineCores}; CPU ms per call: gateways ${b.gatewayCpuMsPerCall}, runtime ${b.runtimeCpuMsPerCall})`
        },
      ).join(', ')}`,
    )
if (results.alternation)
  console.log(
    `scale-out: alternation: ${results.alternation.switches} of ${results.alternation.consecutivePairs} consecutive calls of one client changed replica (per replica ${results.alternation.perReplica.join('/')})`,
  )
if (results.workflows)
  console.log(
    `scale-out: cross-replica workflows ${JSON.stringify(results.workflows.done)}; steps served by another replica than the issuer: ${Object.entries(
      results.workflows.steps,
    )
      .map(([k, s]) => `${k} ${s.otherReplica}/${s.total}`)
      .join(', ')}`,
  )
if (results.rotation)
  console.log(
    `scale-out: rotation under traffic: old key refused and new key accepted by all ${REPLICAS} replicas (each probed directly) ${results.rotation.everyReplicaMs} ms after the store wrote the new key (${results.rotation.everyReplicaAfterCommandExitMs} ms after the command exited; the command took ${results.rotation.commandMs} ms); other credentials: ${results.rotation.trafficErrors} errors in ${results.rotation.trafficCallsDuringRotation} calls`,
  )
if (results.fault)
  console.log(
    `scale-out: replica killed under traffic: ${results.fault.calls} calls, ${results.fault.jobsStarted} jobs; client errors ${JSON.stringify(results.fault.clientErrors)}; nginx moved ${results.fault.nginx.retriedOnAnotherReplica} requests to another replica, ${results.fault.nginx.status502} 502; ${results.fault.runsCutByKill} agent.run cut (${results.fault.runsCutByKillThatRan} of them ran); restart ready in ${results.fault.restartReadyMs} ms, back in rotation ${results.fault.backInRotationMsAfterReady} ms later; handles issued before the kill: ${
      Object.entries(results.fault.handles)
        .filter(([k]) => !k.endsWith('Error'))
        .filter(([, v]) => v).length
    }/${Object.keys(results.fault.handles).filter((k) => !k.endsWith('Error')).length} ok`,
  )
if (results.concurrentRunsOnOneSession) {
  const { twoReplicas: r, oneReplica: o } = results.concurrentRunsOnOneSession
  console.log(
    `scale-out: two runs on one session at the same moment, ${r.tries} times: through nginx (two replicas) both accepted ${r.bothAccepted}, one refused busy ${r.oneBusy}${Object.keys(r.other).length ? `, other ${JSON.stringify(r.other)}` : ''}, accepted jobs ended ${JSON.stringify(r.ends)}; straight to one replica both accepted ${o.bothAccepted}, one refused busy ${o.oneBusy}, accepted jobs ended ${JSON.stringify(o.ends)}`,
  )
}
if (results.ledger)
  console.log(
    `scale-out: jobs: ${results.ledger.jobs} started, ${results.ledger.terminal} terminal, ${results.ledger.lost} lost, ${results.ledger.notListed} not listed; not-found-class errors ${results.errors.notFound} (${results.errors.notFoundExpected} expected, after a delete); 5xx ${results.errors.status5xx}`,
  )
if (failures.length > 0) {
  if (fatal) console.error(fatal)
  console.log(`scale-out${smoke ? ' smoke' : ''} FAILED: ${failures.join('; ')}`)
  process.exit(1)
}
console.log(`scale-out${smoke ? ' smoke' : ''} passed`)
process.exit(0)
