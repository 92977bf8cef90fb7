import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseRequirementList, readConformanceResults } from './conformance-results.ts'

// Shape of `conformance list --server --requirements 2026-07-28` (0.2.0-alpha.12), abridged.
const LIST = `Required for 2026-07-28 (69 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless
  - tools-list

Client scenarios (test against a client):
  - tools_call
  - auth/metadata-default

Run and reported, but never scored:
  extension (16):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  added-after-release (1):
    - json-schema-2020-12-preservation [client]
  pending (3):
    - json-schema-2020-12 [server]
`

describe('parseRequirementList', () => {
  it('lists required and unscored server scenarios, never client ones', () => {
    expect(parseRequirementList(LIST)).toEqual([
      { scenario: 'server-stateless', standing: 'required' },
      { scenario: 'tools-list', standing: 'required' },
      { scenario: 'tasks-lifecycle', standing: 'extension' },
      { scenario: 'json-schema-2020-12', standing: 'pending' },
    ])
  })
})

describe('readConformanceResults', () => {
  let dir = ''
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('reads each scenario folder and ignores anything else', async () => {
    dir = await mkdtemp(join(tmpdir(), 'peer-results-'))
    const folder = join(dir, 'server-tools-list-2026-11-22T02-05-10-591Z')
    await mkdir(folder)
    await writeFile(
      join(folder, 'checks.json'),
      JSON.stringify([{ id: 'tools-list', status: 'SUCCESS', name: 'x', timestamp: 't' }]),
    )
    await mkdir(join(dir, 'unrelated'))
    expect(await readConformanceResults(dir, '2026-07-28')).toEqual([
      { run: '2026-07-28', scenario: 'tools-list', checks: [{ id: 'tools-list', status: 'SUCCESS' }] },
    ])
  })

  it('fails with ERR_PEER_RESULTS_UNREADABLE on an unknown status', async () => {
    dir = await mkdtemp(join(tmpdir(), 'peer-results-'))
    const folder = join(dir, 'server-ping-2026-11-22T02-05-10-591Z')
    await mkdir(folder)
    await writeFile(join(folder, 'checks.json'), JSON.stringify([{ id: 'ping', status: 'PASSED' }]))
    await expect(readConformanceResults(dir, 'x')).rejects.toMatchObject({
      code: 'ERR_PEER_RESULTS_UNREADABLE',
    })
  })
})
