// Helpers shared by the gateway benchmarks and harnesses (run.mjs, moderation.mjs, load.mjs,
// http-trivial.mjs, sessions-scale.mjs).
import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

/** The value at quantile `q` of an ascending array. */
export const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
export const ms = (v) => `${v.toFixed(2)} ms`

/** An MCP client of the gateway at `url`, authenticated with `key` (over `fetch`, when given). */
export async function connect(url, key, { name = 'bench', fetch } = {}) {
  const client = new Client({ name, version: '1' }, { versionNegotiation: { mode: 'auto' } })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      ...(fetch && { fetch }),
    }),
  )
  return client
}

// ---- processes (Linux /proc) ----

/** Resident and peak resident memory of `pid`, in MiB (fractional). */
export async function memoryMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0)
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 }
}

/** Resident memory of `pid`, in MiB (fractional). */
export const rssMiB = async (pid) => (await memoryMiB(pid)).rss

/** CPU time (user + system) `pid` has used, in ms (clock ticks of 10 ms: CLK_TCK 100 on Linux). */
export async function cpuMs(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/**
 * Spawns node with `args` (after `nodeArgs`); resolves with the child and the port of its
 * `{"port":N}` line on stdout. Whatever else it writes there (audit lines) is drained and dropped,
 * so it never blocks. `ipc` adds an IPC channel; `cwd` sets its directory.
 */
export function spawnWithPort(args, { nodeArgs = [], ipc = false, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, ...args], {
      stdio: ['ignore', 'pipe', 'inherit', ...(ipc ? ['ipc'] : [])],
      ...(cwd && { cwd }),
    })
    let out = ''
    let found = false
    child.stdout.on('data', (chunk) => {
      if (found) return
      out += chunk
      for (const line of out.split('\n')) {
        if (!line.startsWith('{"port"')) continue
        found = true
        out = ''
        resolve({ child, port: JSON.parse(line).port })
        return
      }
      out = out.slice(out.lastIndexOf('\n') + 1)
    })
    child.once('exit', (code) => {
      if (!found) reject(new Error(`${args[0]} exited ${code}`))
    })
  })
}
