import type { ScenarioResult } from './conformance-results.ts'

/** Failing checks a test excuses, with the reason written down. */
export interface ExcusedChecks {
  scenario: string
  /** Check ids (`checks.json` `id`) that fail and are excused. */
  checks: readonly string[]
  reason: string
}

/**
 * - `pass`: no failing check.
 * - `partial`: the checks that apply pass; the failing ones are all excused as not applicable.
 * - `not-applicable`: nothing but the suite's generic wire check passed; every failure is excused.
 * - `nothing-scored`: no failure, but no success either beyond the generic wire check (INFO,
 *   WARNING or SKIPPED only), e.g. a session scenario against a stateless server.
 * - `known-failure`: a failure from the known-failure table (a gateway bug waiting for its fix).
 * - `fail`: a failure no table excuses.
 */
export type Verdict = 'pass' | 'partial' | 'not-applicable' | 'nothing-scored' | 'known-failure' | 'fail'

export interface ScenarioVerdict {
  run: string
  scenario: string
  verdict: Verdict
  succeeded: number
  notApplicable: number
  known: number
  unexpected: number
  warnings: number
}

export interface CheckRef {
  run: string
  scenario: string
  check: string
  message: string
}

export interface ConformanceJudgement {
  scenarios: ScenarioVerdict[]
  /** Failures no table excuses: the test must fail on these. */
  unexpected: CheckRef[]
  /** Failures excused by the known-failure table. */
  knownFailures: CheckRef[]
  /** Table entries that no run reported as failing: the table must be trimmed. */
  stale: Array<{ table: 'notApplicable' | 'knownFailures'; scenario: string; check: string }>
  /** SHOULD-level findings, reported but never failing. */
  warnings: CheckRef[]
}

// Checks the suite adds to every scenario; passing them alone says nothing about the scenario.
const GENERIC_CHECKS = new Set(['wire-schema-valid'])

/**
 * Sorts the conformance results of one or more runs against two tables: checks that cannot apply
 * to a gateway, and known gateway failures. Pure; the test asserts on the outcome. An entry is
 * stale when no run reported its check failing, so neither table can silently rot.
 */
export function judgeConformance(
  results: readonly ScenarioResult[],
  tables: { notApplicable: readonly ExcusedChecks[]; knownFailures: readonly ExcusedChecks[] },
): ConformanceJudgement {
  const key = (scenario: string, check: string): string => `${scenario}\u0000${check}`
  const na = new Set(tables.notApplicable.flatMap((e) => e.checks.map((c) => key(e.scenario, c))))
  const known = new Set(tables.knownFailures.flatMap((e) => e.checks.map((c) => key(e.scenario, c))))
  const failedSomewhere = new Set<string>()
  const out: ConformanceJudgement = {
    scenarios: [],
    unexpected: [],
    knownFailures: [],
    stale: [],
    warnings: [],
  }
  for (const { run, scenario, checks } of results) {
    const row: ScenarioVerdict = {
      run,
      scenario,
      verdict: 'pass',
      succeeded: 0,
      notApplicable: 0,
      known: 0,
      unexpected: 0,
      warnings: 0,
    }
    let specificSuccess = false
    for (const check of checks) {
      const ref: CheckRef = { run, scenario, check: check.id, message: check.errorMessage ?? '' }
      if (check.status === 'SUCCESS') {
        row.succeeded++
        if (!GENERIC_CHECKS.has(check.id)) specificSuccess = true
      }
      if (check.status === 'WARNING') {
        row.warnings++
        out.warnings.push(ref)
      }
      if (check.status !== 'FAILURE') continue
      const k = key(scenario, check.id)
      failedSomewhere.add(k)
      if (known.has(k)) {
        row.known++
        out.knownFailures.push(ref)
      } else if (na.has(k)) row.notApplicable++
      else {
        row.unexpected++
        out.unexpected.push(ref)
      }
    }
    if (row.unexpected > 0) row.verdict = 'fail'
    else if (row.known > 0) row.verdict = 'known-failure'
    else if (row.notApplicable > 0) row.verdict = specificSuccess ? 'partial' : 'not-applicable'
    else if (!specificSuccess) row.verdict = 'nothing-scored'
    out.scenarios.push(row)
  }
  for (const [table, entries] of [
    ['notApplicable', tables.notApplicable],
    ['knownFailures', tables.knownFailures],
  ] as const) {
    for (const entry of entries)
      for (const check of entry.checks)
        if (!failedSomewhere.has(key(entry.scenario, check)))
          out.stale.push({ table, scenario: entry.scenario, check })
  }
  return out
}
