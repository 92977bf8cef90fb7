import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { PeerTestsError } from './errors.ts'

const CheckSchema = z.object({
  id: z.string(),
  status: z.enum(['SUCCESS', 'FAILURE', 'WARNING', 'SKIPPED', 'INFO']),
  errorMessage: z.string().optional(),
})
const ChecksFileSchema = z.array(CheckSchema)

/** One check of a conformance scenario, as its `checks.json` reports it. */
export type ConformanceCheck = z.infer<typeof CheckSchema>

/** The checks one scenario reported in one run (`run` names the requirement set). */
export interface ScenarioResult {
  run: string
  scenario: string
  checks: ConformanceCheck[]
}

// `-o <dir>` writes one folder per scenario: `server-<scenario>-<ISO time with - for :>`.
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/

/**
 * Reads every scenario folder the conformance CLI wrote into `dir`.
 *
 * Throws `PeerTestsError` `ERR_PEER_RESULTS_UNREADABLE` when a `checks.json` is missing or does
 * not have the expected shape (a newer suite changed its format: fail loudly, never pass).
 */
export async function readConformanceResults(dir: string, run: string): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = []
  for (const name of (await readdir(dir)).sort()) {
    const match = RESULT_DIR.exec(name)
    if (!match?.[1]) continue
    let checks: ConformanceCheck[]
    try {
      checks = ChecksFileSchema.parse(JSON.parse(await readFile(join(dir, name, 'checks.json'), 'utf8')))
    } catch (cause) {
      throw new PeerTestsError('ERR_PEER_RESULTS_UNREADABLE', `unreadable results of ${match[1]}`, { cause })
    }
    results.push({ run, scenario: match[1], checks })
  }
  return results
}

/** What `conformance list --server --requirements <rev>` says about one server scenario. */
export interface ListedScenario {
  scenario: string
  /** `required`, or why it is run but never scored: `extension`, `pending`, `added-after-release`. */
  standing: string
}

/**
 * Parses the output of `conformance list --server --requirements <rev>`: the required server
 * scenarios, then those "run and reported, but never scored" tagged `[server]`.
 */
export function parseRequirementList(text: string): ListedScenario[] {
  const listed: ListedScenario[] = []
  let section: 'server' | 'other' | 'unscored' = 'other'
  let standing = ''
  for (const line of text.split('\n')) {
    if (/^Server scenarios/.test(line)) section = 'server'
    else if (/^Client scenarios|^Authorization/.test(line)) section = 'other'
    else if (/^Run and reported, but never scored/.test(line)) section = 'unscored'
    else if (section === 'server') {
      const m = /^\s+- (\S+)\s*$/.exec(line)
      if (m?.[1]) listed.push({ scenario: m[1], standing: 'required' })
    } else if (section === 'unscored') {
      const group = /^\s{2}([a-z-]+) \(\d+\):$/.exec(line)
      if (group?.[1]) standing = group[1]
      const m = /^\s+- (\S+) \[server\]$/.exec(line)
      if (m?.[1]) listed.push({ scenario: m[1], standing })
    }
  }
  return listed
}
