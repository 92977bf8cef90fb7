import { describe, expect, it } from 'vitest'
import type { ScenarioResult } from './conformance-results.ts'
import { judgeConformance } from './judge-conformance.ts'

const wire = { id: 'wire-schema-valid', status: 'SUCCESS' } as const
const result = (scenario: string, checks: ScenarioResult['checks'], run = 'r'): ScenarioResult => ({
  run,
  scenario,
  checks: [...checks, wire],
})
const fail = (id: string) => ({ id, status: 'FAILURE' as const, errorMessage: `${id} failed` })
const ok = (id: string) => ({ id, status: 'SUCCESS' as const })

describe('judgeConformance', () => {
  const results = [
    result('tools-list', [ok('tools-list')]),
    result('tools-call-simple-text', [fail('tools-call-simple-text')]),
    result('server-stateless', [ok('a'), fail('needs-fixture')]),
    result('session', []),
    result('bug', [ok('b'), fail('real-bug')]),
    result('new', [fail('surprise')]),
  ]
  const tables = {
    notApplicable: [
      { scenario: 'tools-call-simple-text', checks: ['tools-call-simple-text'], reason: 'fixture' },
      { scenario: 'server-stateless', checks: ['needs-fixture'], reason: 'fixture' },
      { scenario: 'tools-list', checks: ['tools-list'], reason: 'stale entry' },
    ],
    knownFailures: [{ scenario: 'bug', checks: ['real-bug'], reason: 'gateway bug' }],
  }
  const j = judgeConformance(results, tables)
  const verdict = (s: string) => j.scenarios.find((r) => r.scenario === s)?.verdict

  it.each([
    ['tools-list', 'pass'],
    ['tools-call-simple-text', 'not-applicable'],
    ['server-stateless', 'partial'],
    ['session', 'nothing-scored'],
    ['bug', 'known-failure'],
    ['new', 'fail'],
  ])('judges %s as %s', (scenario, expected) => {
    expect(verdict(scenario)).toBe(expected)
  })

  it('reports a failure no table names as unexpected', () => {
    expect(j.unexpected).toEqual([
      { run: 'r', scenario: 'new', check: 'surprise', message: 'surprise failed' },
    ])
  })

  it('reports known failures separately', () => {
    expect(j.knownFailures.map((f) => f.check)).toEqual(['real-bug'])
  })

  it('flags a table entry whose check did not fail as stale', () => {
    expect(j.stale).toEqual([{ table: 'notApplicable', scenario: 'tools-list', check: 'tools-list' }])
  })

  it('flags a fixed known failure as stale so the table gets emptied', () => {
    const fixed = judgeConformance([result('bug', [ok('b'), ok('real-bug')])], {
      notApplicable: [],
      knownFailures: tables.knownFailures,
    })
    expect(fixed.stale).toEqual([{ table: 'knownFailures', scenario: 'bug', check: 'real-bug' }])
    expect(fixed.scenarios[0]?.verdict).toBe('pass')
  })

  it('collects warnings without failing', () => {
    const w = judgeConformance(
      [result('sse', [{ id: 'priming', status: 'WARNING', errorMessage: 'no priming event' }, ok('x')])],
      { notApplicable: [], knownFailures: [] },
    )
    expect(w.scenarios[0]).toMatchObject({ verdict: 'pass', warnings: 1 })
    expect(w.warnings).toEqual([{ run: 'r', scenario: 'sse', check: 'priming', message: 'no priming event' }])
  })
})
