import type { Dirent } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { isAllowedComponents } from './check-path.ts'

/**
 * The built-in engine's walker: relative paths of the regular files under `root`, depth first in
 * name order (deterministic). Symlinks are never followed nor listed (like `rg` without
 * `--follow`), FIFOs, sockets and devices never listed, denied or excluded directories never
 * entered, denied files never yielded. Unreadable directories are skipped.
 */
export async function* walkFiles(root: string, exclude: ReadonlySet<string>): AsyncGenerator<string> {
  const stack: string[][] = [[]]
  while (stack.length > 0) {
    const directory = stack.pop() as string[]
    let entries: Dirent[]
    try {
      entries = await readdir(join(root, ...directory), { withFileTypes: true })
    } catch {
      continue
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const subdirectories: string[][] = []
    for (const entry of entries) {
      if (exclude.has(entry.name)) continue
      const components = [...directory, entry.name]
      if (entry.isDirectory()) {
        if (isAllowedComponents(components, false)) subdirectories.push(components)
      } else if (entry.isFile() && isAllowedComponents(components)) {
        yield components.join('/')
      }
    }
    for (let i = subdirectories.length - 1; i >= 0; i--) stack.push(subdirectories[i] as string[])
  }
}
