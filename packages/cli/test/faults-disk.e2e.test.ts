import { describe, expect, it } from 'vitest'
import { diskFaults, isRoot, problemsOfDiskFault } from '../bench/fault-scenarios.mjs'

// Credential writes on a full or read-only state directory (issue 18), through the BUILT CLI: the
// stack's state/ is a small tmpfs made in the test (root mounts it; anyone else gets a user and
// mount namespace of their own, and if that is not allowed either the test fails and says why).
// The full disk is swept: 0, 1, 2, 3 and 4 pages left, so every command fails at each step of its
// writes (the lock, the first file, the second, the generation) and then succeeds. The scenario
// is bench/fault-scenarios.mjs, shared with `pnpm bench:faults`.

describe('credential add, rotate, set-policy, remove on a full or read-only disk', () => {
  it(`each fails with exit 6 and one line saying why, the store byte for byte unchanged, no temporary file, the old key still resolving — or succeeds completely when there is room (${isRoot ? 'root: mounted here' : 'not root: in a user namespace'})`, async () => {
    const { results } = await diskFaults()
    const failed = results.filter((r) => r.exitCode !== 0)
    process.stdout.write(
      `faults: disk -> ${results.length} cases, ${failed.length} refused (exit 6), ${results.length - failed.length} succeeded with room; e.g. ${failed[0]?.stderr.trim()}\n`,
    )
    expect(results.flatMap(problemsOfDiskFault)).toEqual([])
    // Every command was refused on a full disk and on a read-only one, and the sweep reached room
    // enough for each to succeed: the cases covered the whole range.
    for (const command of ['add', 'rotate', 'set-policy', 'remove']) {
      const mine = results.filter((r) => r.command === command)
      expect(mine.find((r) => r.fault === 'full' && r.freePages === 0)?.exitCode, command).toBe(6)
      expect(mine.find((r) => r.fault === 'read-only')?.exitCode, command).toBe(6)
      expect(
        mine.some((r) => r.fault === 'full' && r.exitCode === 0),
        command,
      ).toBe(true)
    }
    expect(failed.some((r) => /the disk is full \(ENOSPC/.test(r.stderr))).toBe(true)
    expect(failed.some((r) => /the file system is read-only \(EROFS/.test(r.stderr))).toBe(true)
  }, 400_000)

  it.runIf(isRoot)(
    'without root the same cases run in a user namespace of their own (checked here as root)',
    async () => {
      const { userNamespace, results } = await diskFaults({
        viaUserNamespace: true,
        commands: ['rotate'],
        freePages: [0, 4],
      })
      expect(userNamespace).toBe(true)
      expect(results.map((r) => [r.fault, r.freePages, r.exitCode])).toEqual([
        ['full', 0, 6],
        ['full', 4, 0],
        ['read-only', undefined, 6],
      ])
      expect(results.flatMap(problemsOfDiskFault)).toEqual([])
    },
    200_000,
  )
})
