import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorkspaceGuard, GuardError } from '../src/index.ts'
import { RIPGREP } from './helpers/search-fixture.ts'
import { createWorkspaceFixture, type WorkspaceFixture } from './helpers/workspace-fixture.ts'

// Runs in a separate process so the swaps really interleave with the reads' system calls.
// File race: race.txt flips between a regular file and a symlink to the outside canary.
// Directory race: dir/ flips between a real directory and a symlink to an outside directory
// whose data.txt holds the canary.
const SWAPPER = `
const fs = require('node:fs')
const [root, canaryPath, outsideDir] = process.argv.slice(1)
process.chdir(root)
let swaps = 0
for (;;) {
  fs.symlinkSync(canaryPath, 'race.link.tmp'); fs.renameSync('race.link.tmp', 'race.txt')
  fs.renameSync('dir', 'dir.real'); fs.symlinkSync(outsideDir, 'dir')
  fs.writeFileSync('race.file.tmp', 'inside\\n'); fs.renameSync('race.file.tmp', 'race.txt')
  fs.unlinkSync('dir'); fs.renameSync('dir.real', 'dir')
  if (++swaps % 1000 === 0) process.stdout.write('.')
}
`

const ITERATIONS = 4000

let fx: WorkspaceFixture
let swapper: ChildProcess

beforeAll(async () => {
  fx = createWorkspaceFixture()
  fx.write('race.txt', 'inside\n')
  fx.write('dir/data.txt', 'inside\n')
  const outsideDir = join(fx.outside, 'dir')
  mkdirSync(outsideDir)
  writeFileSync(join(outsideDir, 'data.txt'), `${fx.canary}\n`)
  swapper = spawn(process.execPath, ['-e', SWAPPER, fx.root, fx.canaryPath, outsideDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  // Wait until it is really swapping.
  await new Promise<void>((resolve) => swapper.stdout?.once('data', () => resolve()))
})

afterAll(async () => {
  if (swapper.exitCode === null) {
    const exited = new Promise((resolve) => swapper.once('exit', resolve))
    swapper.kill('SIGKILL') // its loop never yields to the event loop, so no graceful signal
    await exited
  }
  fx.remove()
})

describe('check-then-swap race', () => {
  it('no read ever returns outside content while files and directories are swapped for symlinks', async () => {
    const guard = createWorkspaceGuard({ root: fx.root })
    const outcomes = new Map<string, number>()
    for (let i = 0; i < ITERATIONS; i++) {
      const path = i % 2 === 0 ? 'race.txt' : 'dir/data.txt'
      let outcome: string
      try {
        const { text } = await guard.read(path)
        expect(text).not.toContain(fx.canary)
        expect(text).toBe('inside\n')
        outcome = 'read'
      } catch (error) {
        expect(GuardError.isInstance(error), String(error)).toBe(true)
        outcome = (error as GuardError).code
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
    }
    // The race was live: some reads succeeded, some met a symlink.
    expect(outcomes.get('read') ?? 0).toBeGreaterThan(0)
    expect(outcomes.get('ERR_GUARD_DENIED') ?? 0).toBeGreaterThan(0)
    expect(swapper.exitCode).toBeNull()
  })

  it.each([
    // The explicit binary: `undefined` would fall back to the built-in engine without rg.
    ['ripgrep', RIPGREP],
    ['built-in', false as const],
  ])(
    'no search (%s engine) ever returns outside content during the swaps',
    { timeout: 60_000 },
    async (_engine, ripgrepPath) => {
      const guard = createWorkspaceGuard({ root: fx.root, ripgrepPath })
      for (let i = 0; i < 60; i++) {
        const leaked = await guard.search({ mode: 'text', query: fx.canary })
        expect(leaked.matches).toEqual([])
        const inside = await guard.search({ mode: 'text', query: 'inside' })
        for (const match of inside.matches) expect(match.preview).toBe('inside')
        // dir/ is renamed dir.real/ for a moment: both are inside the root.
        const files = await guard.search({ mode: 'files', query: 'data' })
        for (const match of files.matches) expect(['dir/data.txt', 'dir.real/data.txt']).toContain(match.path)
      }
    },
  )
})
