import { writeFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AuthProxy,
  type ConformanceJudgement,
  judgeConformance,
  type ListedScenario,
  type NodeBinary,
  parseRequirementList,
  peerEnv,
  readConformanceResults,
  resolveBin,
  resolvePeerNode,
  runProcess,
  type ScenarioResult,
  startAuthProxy,
} from '../src/index.ts'
import { KNOWN_FAILURES, MUST_APPLY, NOT_APPLICABLE } from './conformance-expectations.ts'
import { type PeerGateway, startPeerGateway } from './harness.ts'

// The MCP conformance suite (an independent implementation of the spec's checks) against the
// real gateway in front of the real runtime. It cannot send an Authorization header, so it talks
// to a loopback proxy that adds the full-policy key. Its own requirement sets pick the scenarios:
// 2025-11-25 (at the 2025 wire, initialize + stateless fallback) and 2026-07-28 (modern wire).

const REQUIREMENT_SETS = ['2025-11-25', '2026-07-28'] as const
const CLI = resolveBin('@modelcontextprotocol/conformance', 'conformance')

let node: NodeBinary
let gw: PeerGateway
let proxy: AuthProxy
const listed: Record<string, ListedScenario[]> = {}
const results: ScenarioResult[] = []
let judgement: ConformanceJudgement

beforeAll(async () => {
  node = resolvePeerNode()
  let gateway: PeerGateway | undefined
  // The proxy starts first: its origin is what the suite sends as `Origin` for the "valid
  // localhost" request of dns-rebinding-protection, so the gateway allowlists exactly it.
  proxy = await startAuthProxy({
    target: () => gateway?.url ?? '',
    authorization: () => `Bearer ${gateway?.keys.full ?? 'none'}`,
  })
  gateway = await startPeerGateway({ allowedOrigins: [proxy.url] })
  gw = gateway
  const home = await gw.tempDir('sallyport-peer-home-')
  for (const set of REQUIREMENT_SETS) {
    const list = await runProcess(node.path, [CLI, 'list', '--server', '--requirements', set], {
      timeoutMs: 30_000,
      env: peerEnv(home),
    })
    expect(list.code, list.stderr).toBe(0)
    listed[set] = parseRequirementList(list.stdout)
    const out = await gw.tempDir(`sallyport-conformance-${set}-`)
    const run = await runProcess(
      node.path,
      [CLI, 'server', '--url', `${proxy.url}/mcp`, '--requirements', set, '--timeout', '15000', '-o', out],
      { timeoutMs: 120_000, env: peerEnv(home), secrets: [gw.keys.full] },
    )
    expect(run.timedOut, `conformance ${set} timed out`).toBe(false)
    // The CLI exits non-zero whenever any check fails, fixture checks included; the tables
    // below decide, so only a crash (no exit code) is fatal here.
    expect(run.code, run.stderr.slice(-2000)).not.toBeNull()
    results.push(...(await readConformanceResults(out, set)))
  }
  judgement = judgeConformance(results, { notApplicable: NOT_APPLICABLE, knownFailures: KNOWN_FAILURES })
  const report = process.env.PEER_CONFORMANCE_REPORT
  if (report) await writeFile(report, renderReport(judgement))
}, 240_000)

afterAll(async () => {
  await proxy?.close()
  await gw?.stop()
})

describe('MCP conformance suite against the gateway', () => {
  it.each(REQUIREMENT_SETS)('runs every server scenario that requirement set %s lists', (set) => {
    const expected = (listed[set] ?? []).map((s) => s.scenario).sort()
    expect(expected.length).toBeGreaterThan(20)
    const ran = results.filter((r) => r.run === set).map((r) => r.scenario)
    expect([...new Set(ran)].sort()).toEqual(expected)
  })

  it('fails no check that applies to a gateway (other than listed known failures)', () => {
    expect(judgement.unexpected).toEqual([])
  })

  it('excuses only checks that really fail (neither table is stale)', () => {
    expect(judgement.stale).toEqual([])
  })

  it.each(
    Object.entries(MUST_APPLY).flatMap(([set, scenarios]) =>
      Object.entries(scenarios).map(([s, v]) => [set, s, v]),
    ),
  )('at %s, %s is %s', (set, scenario, verdict) => {
    const row = judgement.scenarios.find((r) => r.run === set && r.scenario === scenario)
    expect(row?.verdict).toBe(verdict)
  })

  it('saw the gateway answer every request the suite sent through the proxy (no 5xx)', () => {
    expect(proxy.exchanges.length).toBeGreaterThan(100)
    expect(proxy.exchanges.filter((e) => e.status >= 500)).toEqual([])
  })

  it('never let the key into the suite output or the gateway log', () => {
    expect(JSON.stringify(results)).not.toContain(gw.keys.full)
    expect(JSON.stringify(gw.logs())).not.toContain(gw.keys.full)
  })
})

/** The README table: one row per scenario, one column per requirement set. */
function renderReport(j: ConformanceJudgement): string {
  const reasons = new Map(NOT_APPLICABLE.map((e) => [e.scenario, e.reason]))
  const scenarios = [...new Set(j.scenarios.map((r) => r.scenario))].sort()
  const cell = (set: string, scenario: string): string => {
    const r = j.scenarios.find((x) => x.run === set && x.scenario === scenario)
    if (!r) return '—'
    const counts =
      r.notApplicable > 0 ? ` (${r.succeeded} ok, ${r.notApplicable} n/a)` : ` (${r.succeeded} ok)`
    return `${r.verdict}${counts}${r.warnings > 0 ? `, ${r.warnings} warn` : ''}`
  }
  const lines = [
    `| scenario | ${REQUIREMENT_SETS.join(' | ')} | why not applicable |`,
    `|---|${REQUIREMENT_SETS.map(() => '---|').join('')}---|`,
  ]
  for (const s of scenarios) {
    const hasNa = j.scenarios.some((r) => r.scenario === s && r.notApplicable > 0)
    lines.push(
      `| \`${s}\` | ${REQUIREMENT_SETS.map((set) => cell(set, s)).join(' | ')} | ${hasNa ? (reasons.get(s) ?? '') : ''} |`,
    )
  }
  lines.push('', '| warning (SHOULD) | set | scenario | message |', '|---|---|---|---|')
  for (const w of j.warnings) lines.push(`| \`${w.check}\` | ${w.run} | \`${w.scenario}\` | ${w.message} |`)
  return `${lines.join('\n')}\n`
}
