// Helpers shared by the gateway benchmarks (run.mjs, moderation.mjs).
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
