import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Newest modification time of any file under `dir`. */
function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

/** The end-to-end tests run the BUILT CLI as a process: build it first when the sources are newer. */
export function setup(): void {
  const bin = join(import.meta.dirname, '..', 'dist', 'bin.js')
  if (existsSync(bin) && statSync(bin).mtimeMs >= newest(join(import.meta.dirname, '..', 'src'))) return
  const result = spawnSync('npx', ['tsup'], { cwd: join(import.meta.dirname, '..'), stdio: 'inherit' })
  if (result.status !== 0) throw new Error('building the CLI for the end-to-end tests failed')
}
